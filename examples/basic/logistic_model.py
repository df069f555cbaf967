"""Logistic regression example for ``mlt ssh train``: both the model spec and its trainer.

mlt uploads this file to the remote directory and runs its ``train_cmd`` (see
``logistic_model.ssh.yaml``: ``python3 {spec}``), so the same file is the
"model specification" mlt resolves locally and the program that trains remotely.
It needs only the Python 3.9+ standard library.

    python3 logistic_model.py [--epochs N] [--fail-at-epoch K] [--sleep S]

Environment set by mlt (all optional when run by hand):
  MLT_MODEL    model name (default: this file's stem)
  MLT_LOG_DIR  log dir for checkpoints/ and history.json (default ~/.mltk/models/<model>)
  MLT_ARCHIVE  model archive to write (default <model>.mltk.zip in the cwd)
  MLT_CLEAN=1  delete old checkpoints and history first; MLT_VERBOSE=1 more output
  RUN_NOTE     printed if set (an example of the `environment` setting)

Training resumes from the newest ``checkpoints/checkpoint-NNNN.json``, so a run that
failed or was stopped (or moved to a new host with ``mlt ssh train --restore``)
continues where it left off. Every epoch uses its own seed, so a resumed run ends with
the same weights as an uninterrupted one. SIGTERM/SIGINT stop the run within ~50 ms.
"""
import argparse
import json
import math
import os
import random
import signal
import sys
import time
import zipfile

SEED, SAMPLES, BATCH, LEARNING_RATE = 1234, 2000, 50, 0.1
stop_signal = 0  # set by the signal handler, checked between batches and while sleeping


def on_signal(signum, _frame):
    global stop_signal
    stop_signal = signum


def write_atomic(path, data):
    """Write text or bytes so readers (and mlt's downloads) never see a partial file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def make_dataset():
    """Two seeded 2-D Gaussian blobs: label 0 around (-1, -1), label 1 around (1, 1)."""
    rng = random.Random(SEED)
    data = []
    for i in range(SAMPLES):
        label = i % 2
        center = 1.0 if label else -1.0
        data.append((rng.gauss(center, 1.0), rng.gauss(center, 1.0), label))
    return data


def predict(w, x0, x1):
    z = max(-30.0, min(30.0, w[0] * x0 + w[1] * x1 + w[2]))
    return 1.0 / (1.0 + math.exp(-z))


def evaluate(w, data):
    loss = correct = 0
    for x0, x1, y in data:
        p = min(max(predict(w, x0, x1), 1e-12), 1 - 1e-12)
        loss -= math.log(p) if y else math.log(1 - p)
        correct += (p >= 0.5) == bool(y)
    return loss / len(data), correct / len(data)


def train_epoch(w, data, epoch):
    """One pass of mini-batch SGD; returns False if a signal arrived mid-epoch."""
    order = list(range(len(data)))
    random.Random(SEED + epoch).shuffle(order)
    for start in range(0, len(order), BATCH):
        if stop_signal:
            return False
        grad = [0.0, 0.0, 0.0]
        batch = order[start:start + BATCH]
        for i in batch:
            x0, x1, y = data[i]
            err = predict(w, x0, x1) - y
            grad[0] += err * x0
            grad[1] += err * x1
            grad[2] += err
        for k in range(3):
            w[k] -= LEARNING_RATE * grad[k] / len(batch)
    return True


def latest_checkpoint(ckpt_dir):
    names = sorted(n for n in os.listdir(ckpt_dir)
                   if n.startswith("checkpoint-") and n.endswith(".json")) if os.path.isdir(ckpt_dir) else []
    return names[-1] if names else None


def sleep_interruptibly(seconds):
    end = time.monotonic() + seconds
    while not stop_signal and time.monotonic() < end:
        time.sleep(min(0.05, max(0.0, end - time.monotonic())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8, help="number of epochs (default 8)")
    parser.add_argument("--fail-at-epoch", type=int, default=0, metavar="K",
                        help="exit with status 3 after epoch K (after its checkpoint)")
    parser.add_argument("--sleep", type=float, default=0.2, metavar="S", help="seconds to sleep per epoch")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    model = os.environ.get("MLT_MODEL") or os.path.splitext(os.path.basename(__file__))[0]
    epochs = args.epochs
    log_dir = os.path.expanduser(os.environ.get("MLT_LOG_DIR") or f"~/.mltk/models/{model}")
    archive = os.environ.get("MLT_ARCHIVE") or f"{model}.mltk.zip"
    verbose = os.environ.get("MLT_VERBOSE") == "1"
    ckpt_dir = os.path.join(log_dir, "checkpoints")
    history_path = os.path.join(log_dir, "history.json")

    print(f"model {model}: {SAMPLES} samples, {epochs} epochs, log dir {log_dir}", flush=True)
    print("warning: stdlib-only toy model, no GPU used (this line goes to stderr)", file=sys.stderr, flush=True)
    if os.environ.get("RUN_NOTE"):  # set by the `environment` of logistic_model.ssh.yaml
        print(f"run note: {os.environ['RUN_NOTE']}", flush=True)
    if verbose:
        print(f"verbose: cwd={os.getcwd()} archive={archive} python={sys.version.split()[0]}", flush=True)

    if os.environ.get("MLT_CLEAN") == "1":
        removed = 0
        for name in os.listdir(ckpt_dir) if os.path.isdir(ckpt_dir) else []:
            os.remove(os.path.join(ckpt_dir, name))
            removed += 1
        if os.path.exists(history_path):
            os.remove(history_path)
        print(f"clean: removed {removed} checkpoint(s) and the history", flush=True)

    weights, first_epoch, history = [0.0, 0.0, 0.0], 1, []
    newest = latest_checkpoint(ckpt_dir)
    if newest:
        with open(os.path.join(ckpt_dir, newest)) as f:
            ckpt = json.load(f)
        weights, first_epoch = ckpt["weights"], ckpt["epoch"] + 1
        if os.path.exists(history_path):
            with open(history_path) as f:
                history = [h for h in json.load(f) if h["epoch"] <= ckpt["epoch"]]
        print(f"resuming from {newest} (epoch {ckpt['epoch']})", flush=True)

    data = make_dataset()
    for epoch in range(first_epoch, epochs + 1):
        if not train_epoch(weights, data, epoch):
            break
        loss, accuracy = evaluate(weights, data)
        history.append({"epoch": epoch, "loss": round(loss, 6), "accuracy": round(accuracy, 6)})
        write_atomic(os.path.join(ckpt_dir, f"checkpoint-{epoch:04d}.json"),
                     json.dumps({"epoch": epoch, "weights": weights, "loss": loss, "accuracy": accuracy}))
        write_atomic(history_path, json.dumps(history, indent=1))
        print(f"epoch {epoch}/{epochs} loss={loss:.4f} accuracy={accuracy:.3f}", flush=True)
        if epoch == args.fail_at_epoch:
            print(f"error: simulated failure after epoch {epoch} (--fail-at-epoch); "
                  f"a rerun resumes at epoch {epoch + 1}", file=sys.stderr, flush=True)
            return 3
        if epoch < epochs:
            sleep_interruptibly(args.sleep)
        if stop_signal:
            break
    if stop_signal:
        name = signal.Signals(stop_signal).name
        print(f"stopped by {name}; last checkpoint: {latest_checkpoint(ckpt_dir)}", file=sys.stderr, flush=True)
        return 128 + stop_signal

    loss, accuracy = evaluate(weights, data)
    summary = (f"model: {model}\nepochs: {epochs}\nloss: {loss:.4f}\naccuracy: {accuracy:.3f}\n"
               f"weights: {', '.join(f'{v:.4f}' for v in weights)}\n")
    write_atomic(os.path.join("results", "summary.txt"), summary)  # in the cwd; see download_files
    os.makedirs(os.path.dirname(os.path.abspath(archive)), exist_ok=True)
    tmp_zip = f"{archive}.tmp{os.getpid()}"
    with zipfile.ZipFile(tmp_zip, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{model}.weights.json", json.dumps({"weights": weights, "epochs": epochs}, indent=1))
        z.writestr("history.json", json.dumps(history, indent=1))
        z.writestr("summary.txt", summary)
    os.replace(tmp_zip, archive)
    print(f"training finished: accuracy={accuracy:.3f}, archive {archive} ({os.path.getsize(archive)} bytes)",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
