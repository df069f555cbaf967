# The first line of a start sent ahead (start_job_if_current), from the login dir where the upload's
# bases are relative to, before enter_run.sh: mlt_current says whether the test mlt_current_test
# (uploads_current_test: a shell test, run by eval) found that nothing is left to upload.
if eval "$mlt_current_test"; then mlt_current() { true; }; else mlt_current() { false; }; fi
