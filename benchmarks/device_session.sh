#!/usr/bin/env bash
# One device call of GPU work, step by step, each with its own time budget; every result lands
# under $OUT (the device tool brings it back). Usage (on the GPU machine, from the repo root):
#   bash benchmarks/device_session.sh STEP...   STEP: soundness | train | gap | flax | corpus | corpus_eager | files_c | dispatch | floors | graphed | rank0 | kb1 | kb23 | kb2c | perops
#   ARCH: the spec of the GPU at hand (default: H200-SXM or H100-SXM, from nvidia-smi); RUN: a suffix for
#   calibration files (default 1)
#   dispatch: three runs of solar calibrate --dispatch-only (about 40 s each on an H100's host; the sweeps
#   joined as dispatch_shapes_start$RUN.jsonl, one machine start) and benchmarks/eager_host_calibrate.py
#   rank0: each sharded example's rank-0 program alone (benchmarks/multigpu_measure.py --rank0 8)
#   floors: shortest kernel spans (benchmarks/device_floors.py); graphed: eager (sync start) and CUDA-graph
#   replay times of $GRAPHED (files or timed steps FAMILY:SCENARIO; default, the eager-class validation set:
#   benchmarks/dispatch/*.py, the batch-1 variants of benchmarks/variants.py, the transformers steps of
#   benchmarks/hf_timed.py, the corpus models $VALIDATION_MODELS, .kb/level3/*.py), ten a process,
#   $GRAPHED_S seconds in all (default 300; the whole set took 200 s on an H100)
#   files_c: eager + torch.compile of the files in $FILES (or timed transformers steps: FAMILY:SCENARIO,
#   benchmarks/hf_timed.py), compiled first in $WARM_JOBS parallel untimed subprocesses
#   train: solar validate --train of $TRAIN (default examples/train/*.py), $TRAIN_S seconds each (default 90)
#   perops: per-op kernel times (torch.profiler) of benchmarks/per_op_files.txt
#   gap: where each eager call's host time goes (benchmarks/eager_host_gap.py) for $GAP (default:
#   benchmarks/dispatch/*.py .kb/level3/*.py), $GAP_S seconds (default 240)
# Wheels for packages the device image lacks travel in .whl/ (README of the device tool). Back here, file
# what came back with `python benchmarks/device_ingest.py OUT_DIR h100|h200 --run $RUN`.
set -u
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) DETECTED=H200-SXM ;; *) DETECTED=H100-SXM ;;
esac
ARCH=${ARCH:-$DETECTED}
VALIDATION_MODELS="einops_mlp_mixer_fp16 hf_bert_base_fp16 hf_clip_vit_b32_fp16 hf_distilbert_fp16 hf_gpt2_fp16 hf_llama2_7b_bf16 hf_llama3_8b_bf16"
RUN=${RUN:-1}
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/nvidia_smi.csv
# the host of this machine start (CPU, Python, torch, CUDA, GPU, driver), filed with its results
(lscpu; echo; python3 -c 'import sys, torch; print(sys.version, torch.__version__, torch.version.cuda)'; cat $OUT/nvidia_smi.csv) > $OUT/host_start$RUN.txt 2>&1
for step in "$@"; do
  echo "== $step $(date -u +%T)"
  case $step in
    soundness) timeout 120 python3 benchmarks/soundness/sweep.py --out $OUT --only slice_inplace index_copy kvcache --modes eager --budget-s 90 ;;
    train) for f in ${TRAIN:-examples/train/*.py}; do
             timeout ${TRAIN_S:-90} python3 -m solar.cli validate $f --train --arch $ARCH --json >> $OUT/train.jsonl 2>> $OUT/train.err
             echo "$f rc=$?"; done ;;
    corpus) ls benchmarks/models/*.py | grep -v -e 70b -e mixtral > /tmp/corpus.txt
            timeout 360 python3 benchmarks/measure_files.py $(cat /tmp/corpus.txt) --out $OUT/models.jsonl --compile --reps 20 --budget-s 320 ;;
    corpus_eager) ls benchmarks/models/*.py | grep -v -e 70b -e mixtral | grep -v -f <(sed -n 's/.*"problem": "\([^"]*\)".*/\1/p' ${MEASURED:-/dev/null}) > /tmp/corpus.txt
            timeout 150 python3 benchmarks/measure_files.py $(cat /tmp/corpus.txt) --out $OUT/models_eager.jsonl --reps 20 --budget-s 120 ;;
    dispatch) for k in 1 2 3; do  # three calibrations of this start; their sweeps in one file (one start)
                XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 150 python3 -m solar.cli calibrate --dispatch-only --arch $ARCH \
                  --out $OUT/${ARCH}_$k.yaml --raw $OUT/dispatch_run${RUN}_$k.json
              done
              cat $OUT/dispatch_shapes_run${RUN}_*.jsonl > $OUT/dispatch_shapes_start$RUN.jsonl && rm -f $OUT/dispatch_shapes_run${RUN}_*.jsonl
              timeout 200 python3 benchmarks/eager_host_calibrate.py --out $OUT/eager_host_cal$RUN.json ;;
    floors) timeout 120 python3 benchmarks/device_floors.py --out $OUT/floors_run$RUN.json ;;
    graphed) end=$((SECONDS + ${GRAPHED_S:-300}))
             python3 benchmarks/variants.py /tmp/variants > /dev/null
             steps=$(python3 -c 'from benchmarks.hf_timed import NAMES; print(*NAMES)')
             models=$(printf 'benchmarks/models/%s.py ' $VALIDATION_MODELS)
             printf '%s\n' ${GRAPHED:-benchmarks/dispatch/*.py /tmp/variants/dispatch/*.py $steps $models .kb/level3/*.py} > /tmp/graphed.txt
             while read -r chunk; do left=$((end - SECONDS)); [ $left -lt 20 ] && break
               timeout $left python3 benchmarks/eager_host_measure.py $chunk --graphed --reps 20 --budget-s $((left - 15)) --out $OUT/graphed.jsonl
             done < <(xargs -n 10 < /tmp/graphed.txt) ;;
    gap) timeout $(( ${GAP_S:-240} + 60 )) python3 benchmarks/eager_host_gap.py ${GAP:-benchmarks/dispatch/*.py .kb/level3/*.py} \
           --budget-s ${GAP_S:-240} --out $OUT/gap.jsonl ;;
    rank0) timeout ${RANK0_S:-150} python3 benchmarks/multigpu_measure.py --rank0 8 --out $OUT/rank0.jsonl ;;
    kb1) timeout 440 python3 benchmarks/measure_files.py .kb/level1/*.py --out $OUT/kb_level1.jsonl --reps 20 --budget-s ${KB_BUDGET:-400} ;;
    kb23) timeout 560 python3 benchmarks/measure_files.py .kb/level2/*.py .kb/level3/*.py --out $OUT/kb_level23.jsonl --reps 20 --budget-s 520 ;;
    kb2c) timeout 570 python3 benchmarks/measure_files.py .kb/level2/*.py --out $OUT/kb_level2_compile.jsonl --compile --warm-jobs 12 --warm-budget-s 230 --reps 20 --budget-s 540 --name-depth 2 ;;
    perops) timeout 420 python3 benchmarks/measure_ops.py $(cat benchmarks/per_op_files.txt) \
              --out $OUT/per_op.jsonl --reps 5 --budget-s 380 --name-depth 2 ;;
    files_c) timeout 580 python3 benchmarks/measure_files.py ${FILES} --out $OUT/files_compile.jsonl --compile --warm-jobs ${WARM_JOBS:-8} --warm-timeout 300 --warm-budget-s 300 --reps 20 --budget-s 560 ;;
    flax) for f in examples/train/flax*.py; do
             timeout 120 python3 -m solar.cli validate $f --train --arch $ARCH --json >> $OUT/train.jsonl 2>> $OUT/train.err
             echo "$f rc=$?"; done ;;
    *) echo "unknown step $step" ;;
  esac
done
echo "== done $(date -u +%T)"
