# Up: puts the partial file of an upload in ranges in its place (finish_ranges_command in
# range_commands.cpp).
# Inputs: p (the partial file), d (its hash dir, removed), m (the mtime, "@SECONDS.NANOS"),
# o (the mode, octal), f (the destination).
# A file of no bytes has no range that would have created the partial file. BusyBox's touch reads
# no fraction of a second (there the mtime keeps its whole seconds) and no time before 1970 (there
# the file keeps the time it was written): the next run then finds the file changed and sends it
# again, rather than this one failing.
: >> "$p" && { touch -m -d "$m" "$p" 2>/dev/null || touch -m -d "${m%.*}" "$p" 2>/dev/null || :; } && chmod "$o" "$p" && mv -f -- "$p" "$f" && rm -rf -- "$d"
