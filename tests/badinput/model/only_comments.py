# case: only comments
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*defines no Model, get_inputs
# nothing here
