# The sha256 of the listing of the remote dir $mlt_tree, as local_tree_digest computes it
# for a local dir (remote_tree_digest in incremental.cpp): a record per regular file,
# "SIZE MTIME ./NAME" (find's -printf $mlt_f), sorted; an unreadable file, or a find that
# failed, makes it another. Nothing when the dir is missing. Run in a command substitution.
cd -- "$mlt_tree" 2>/dev/null && { LC_ALL=C find . -type f \( -readable -printf "$mlt_f" -o -printf 'u\0' \) || printf 'x\0'; } | LC_ALL=C sort -z | sha256sum 2>/dev/null | cut -c 1-64
