# mlt_released: the lock is gone because a follow of run $r released it (ReleaseAtEnd: it lies as
# `released`, which names the run), and the job files are still that run's. For the follow's end and
# retake_run. A library of functions: it runs nothing itself.
mlt_released() { [ ! -e "$j/lock" ] && mlt_files_mine && grep -qxF "run=$r" "$j/released" 2>/dev/null; }
