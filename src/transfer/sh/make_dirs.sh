# Creates the directories named on stdin (NUL-separated, relative) under the remote base $B,
# itself created (make_parent_dirs in tar_upload.cpp). GNU tar creates a missing parent
# directory when a file's open fails, and gives up on the file if it then finds nothing to
# create: with several tars unpacking into one base at once, another one may have just made
# it (seen as "Cannot open: No such file or directory" in 3 of 12 runs). So before parallel
# streams, one round trip makes them all.
mkdir -p -- "$B" && cd -- "$B" && xargs -0 -r mkdir -p --
