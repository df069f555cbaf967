# The barrier of a multi-node run (barrier_ready in barrier.cpp), after enter.sh with j: exits 0
# when this node's job waits at it (the wrapper wrote `ready`).
test -e "$j/ready"
