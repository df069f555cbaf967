# Sends what the log l holds from byte o + 1 on (read_log); a missing log reads as empty.
if [ -e "$l" ]; then tail -c +"$((o + 1))" "$l"; fi
