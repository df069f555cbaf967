# The regular files under the remote dir $B, NUL-separated, each as ./name
# (list_remote_files in remote_list.cpp). A missing dir is an empty list, not an error:
# nothing was uploaded there yet.
[ -d "$B" ] || exit 0
cd -- "$B" && find . -type f -print0
