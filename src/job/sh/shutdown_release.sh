# The unattended release of a rented machine (docs/providers.md), the last step of the guard's
# shutdown batch (shutdown_batch.sh) when no mlt collected the run in time: the machine is stopped,
# never destroyed (the results are not home yet: its disk keeps them, and a --resume after the
# machine is started again collects them). It takes the marketplace's CLI on this host and the
# instance's own credentials: vast.ai puts CONTAINER_ID and CONTAINER_API_KEY in the container's
# environment (PID 1's when the login's lacks them), RunPod's pods ship runpodctl with
# RUNPOD_POD_ID and RUNPOD_API_KEY. Without them it says so: the machine keeps billing. In:
# mlt_provider (vast or runpod), mlt_instance (the instance mlt rented: a machine that says it is
# another is not stopped). The key goes through the environment, never argv. The stop runs after
# the batch has ended (its status written): it ends this machine, the guard with it.
mlt_pid1_env() { tr '\0' '\n' < /proc/1/environ 2>/dev/null | sed -n "s/^$1=//p" | head -n 1; }
mlt_release() {
  case $mlt_provider in
    vast)
      mlt_id=${CONTAINER_ID:-$(mlt_pid1_env CONTAINER_ID)}
      mlt_key=${CONTAINER_API_KEY:-$(mlt_pid1_env CONTAINER_API_KEY)}
      mlt_cli=vastai mlt_what="vast.ai instance $mlt_id"
      ;;
    runpod)
      mlt_id=${RUNPOD_POD_ID:-$(mlt_pid1_env RUNPOD_POD_ID)}
      mlt_key=${RUNPOD_API_KEY:-$(mlt_pid1_env RUNPOD_API_KEY)}
      mlt_cli=runpodctl mlt_what="RunPod pod $mlt_id"
      ;;
    *) return 0 ;;
  esac
  if ! command -v "$mlt_cli" > /dev/null 2>&1 || [ -z "$mlt_id" ] || [ -z "$mlt_key" ]; then
    echo "mlt: this machine cannot stop itself (no $mlt_cli, or no instance id and key in its environment): it keeps billing until you release it (mlt ssh release)"
    return 1
  fi
  if [ "$mlt_id" != "$mlt_instance" ]; then
    echo "mlt: this machine says it is $mlt_what, not the one mlt rented ($mlt_instance): it is not stopped"
    return 1
  fi
  echo "mlt: stopping this $mlt_what (its disk keeps the results; mlt ssh release destroys it)"
  case $mlt_provider in
    vast) (sleep 1; VAST_API_KEY=$mlt_key vastai stop instance "$mlt_id"; echo "mlt: the stop of $mlt_what ended with exit status $?") 2>&1 & ;;
    runpod) (sleep 1; RUNPOD_API_KEY=$mlt_key runpodctl stop pod "$mlt_id"; echo "mlt: the stop of $mlt_what ended with exit status $?") 2>&1 & ;;
  esac
}
