# Whether this node can open a TCP connection to mlt_addr:mlt_port within mlt_seconds (probe in
# preflight.cpp): bash's /dev/tcp, else python3. Exit 0: it can.
if command -v bash >/dev/null; then
  timeout "$mlt_seconds" bash -c "exec 3<>\"/dev/tcp/\$0/\$1\"" "$mlt_addr" "$mlt_port" 2>/dev/null
else
  timeout "$mlt_seconds" python3 -c "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 5)" "$mlt_addr" "$mlt_port" 2>/dev/null
fi
