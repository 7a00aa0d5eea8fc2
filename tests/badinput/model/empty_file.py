# case: an empty file
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*empty_file\.py: defines no Model, get_inputs
