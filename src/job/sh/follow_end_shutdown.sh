# The end of a follow of shutdown_cmds (follow.sh), after the log's last byte: their status, on
# stderr after the result's marker line (never mixed with the log's bytes).
exec >&2
echo mlt-follow-result
printf 'exit=%s\n' "$(cat "$s" 2>/dev/null)"
