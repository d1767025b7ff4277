"""How a worker process keeps numeric libraries to one thread each."""

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                     "MKL_NUM_THREADS")}
"""Environment that keeps OpenMP, OpenBLAS and MKL to one thread: numpy otherwise starts a
thread per core as it is imported (CPU at every start, memory a core, and a task each against
a sandbox's process limit). Set before the library loads: in a child's environment, or first
thing in a worker."""
