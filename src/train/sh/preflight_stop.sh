# Ends the preflight's listener mlt_pid on rank 0 (preflight in preflight.cpp), if it still runs.
kill "$mlt_pid" 2>/dev/null
true
