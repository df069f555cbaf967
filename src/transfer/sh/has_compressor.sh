# Prints "yes" when the remote has the compressor $c (usable_compression in sync.cpp).
command -v "$c" >/dev/null 2>&1 && echo yes
