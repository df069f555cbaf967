# The remote side of a download's tar stream (download_tar in tar_download.cpp).
# Inputs: B (the remote base), Z (tar's compression option, or empty); the names on stdin,
# NUL-separated.
# `sort -z` reads the whole name list before tar starts writing, so the archive comes in path
# order whatever order the list had. ZSTD_CLEVEL=1: zstd at level 1, as for uploads (gzip
# keeps its default; its GZIP variable is deprecated). --hard-dereference stores hard links
# as files (mlt skips link entries); pax keeps sub-second mtimes; --verbatim-files-from
# keeps a name like `-C` a name.
cd -- "$B" && sort -z | ZSTD_CLEVEL=1 tar -cf - ${Z:+"$Z"} --format=pax --hard-dereference --null --verbatim-files-from -T -
