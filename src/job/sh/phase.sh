# Records phase mlt_to in the run's lock (set_run_phase).
mlt_mine || mlt_foreign
mlt_phase "$mlt_to"
