# Prints the status the shutdown script recorded (read_shutdown_status); nothing while it runs.
cat "$j/shutdown.status" 2>/dev/null; true
