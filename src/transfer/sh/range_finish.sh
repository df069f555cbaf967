# Up: puts the partial file of an upload in ranges in its place (finish_ranges_command in
# range_commands.cpp).
# Inputs: p (the partial file), d (its hash dir, removed), m (the mtime, "@SECONDS.NANOS"),
# o (the mode, octal), f (the destination).
# A file of no bytes has no range that would have created the partial file.
: >> "$p" && touch -m -d "$m" "$p" && chmod "$o" "$p" && mv -f -- "$p" "$f" && rm -rf -- "$d"
