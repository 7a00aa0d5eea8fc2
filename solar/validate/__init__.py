"""Validation against real CUDA kernels: time a program on the GPU at hand the way SOL benchmarks do
(inputs on device, warm-up, L2 flushed before every timed call, CUDA events) and check that no
measured time beats a bound that claims to be a lower bound for that execution."""
