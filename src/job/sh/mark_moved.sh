# Marks the run's lock as one the run moved away from (mark_run_moved): a `moved=` line with
# mlt_where. The lock rewritten whole under a name of its own, then moved into place.
mlt_mine || exit 0
if ! { { grep -v '^moved=' "$j/lock"; printf 'moved=%s\n' "$mlt_where"; } > "$j/lock.$$.tmp" && mv -f "$j/lock.$$.tmp" "$j/lock"; }; then rm -f "$j/lock.$$.tmp"; mlt_nospace; exit 1; fi
