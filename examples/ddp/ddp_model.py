"""PyTorch DistributedDataParallel example for ``mlt ssh -h node0 -h node1 train``.

Like ``examples/basic/logistic_model.py`` this file is both the model spec mlt uploads
and the training program its ``train_cmd`` runs (``python3 {spec}``, see
``ddp_model.ssh.yaml``). mlt starts it once per node and exports:

  MLT_NODE_RANK, MLT_NUM_NODES   this node's rank and the number of nodes
  MASTER_ADDR, MASTER_PORT       rendezvous address of rank 0 (env:// init)
  MLT_MODEL, MLT_LOG_DIR, MLT_ARCHIVE, MLT_CLEAN   as for single-node runs

One process per node (rank = node rank, world size = number of nodes), CPU only, gloo
backend. It calls ``torch.distributed.init_process_group`` directly instead of going
through ``torchrun`` (Debian's torchrun does not work with Python 3.11).

    python3 ddp_model.py [--epochs N] [--sleep S]

Rank 0 prints the loss of every epoch, writes ``$MLT_LOG_DIR/checkpoints/checkpoint-NNNN.pt``
and at the end the archive ``<model>.mltk.zip``. A rerun resumes after rank 0's newest
checkpoint (DDP broadcasts rank 0's weights to the other ranks); MLT_CLEAN=1 starts over.
Run two ranks by hand on one machine:

    MASTER_ADDR=127.0.0.1 MASTER_PORT=29512 MLT_NUM_NODES=2 MLT_NODE_RANK=0 python3 ddp_model.py &
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29512 MLT_NUM_NODES=2 MLT_NODE_RANK=1 python3 ddp_model.py
"""
import argparse
import datetime
import hashlib
import io
import json
import os
import platform
import sys
import time
import zipfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

FEATURES, SAMPLES, BATCH, LEARNING_RATE = 8, 4096, 64, 0.05


def save_atomic(path, write):
    """Write via a temp file + os.replace so a download never sees a partial file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, path)


def make_dataset(rank, world):
    """The same seeded regression problem on every rank; each rank keeps its shard."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SAMPLES, FEATURES, generator=gen)
    true_w = torch.arange(1, FEATURES + 1, dtype=torch.float32) / FEATURES
    y = x @ true_w + 0.5 + 0.1 * torch.randn(SAMPLES, generator=gen)
    return x[rank::world], y[rank::world].unsqueeze(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5, help="number of epochs (default 5)")
    parser.add_argument("--sleep", type=float, default=0.0, metavar="S", help="seconds to sleep per epoch")
    args = parser.parse_args()

    rank = int(os.environ.get("MLT_NODE_RANK", "0"))
    world = int(os.environ.get("MLT_NUM_NODES", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    model_name = os.environ.get("MLT_MODEL") or os.path.splitext(os.path.basename(__file__))[0]
    log_dir = os.path.expanduser(os.environ.get("MLT_LOG_DIR") or f"~/.mltk/models/{model_name}")
    archive = os.environ.get("MLT_ARCHIVE") or f"{model_name}.mltk.zip"
    ckpt_dir = os.path.join(log_dir, "checkpoints")

    print(f"rank {rank}/{world} ready (torch {torch.__version__}, "
          f"master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']})", flush=True)
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=5))

    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    start = torch.zeros(1, dtype=torch.int64)  # last finished epoch, decided by rank 0
    history = []
    if rank == 0:
        if os.environ.get("MLT_CLEAN") == "1" and os.path.isdir(ckpt_dir):
            for name in os.listdir(ckpt_dir):
                os.remove(os.path.join(ckpt_dir, name))
            print("clean: removed old checkpoints", flush=True)
        names = sorted(n for n in os.listdir(ckpt_dir) if n.endswith(".pt")) if os.path.isdir(ckpt_dir) else []
        if names:
            ckpt = torch.load(os.path.join(ckpt_dir, names[-1]))
            model.load_state_dict(ckpt["model"])
            start[0], history = ckpt["epoch"], ckpt["history"]
            print(f"resuming from {names[-1]} (epoch {ckpt['epoch']})", flush=True)
    dist.broadcast(start, src=0)
    ddp = DistributedDataParallel(model)  # broadcasts rank 0's parameters to every rank
    optimizer = torch.optim.SGD(ddp.parameters(), lr=LEARNING_RATE)
    x, y = make_dataset(rank, world)

    for epoch in range(int(start[0]) + 1, args.epochs + 1):
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        totals = torch.zeros(2)  # sum of squared errors, number of samples
        for i in range(0, len(x), BATCH):
            idx = order[i:i + BATCH]
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(ddp(x[idx]), y[idx])
            loss.backward()  # DDP averages the gradients over all ranks here
            optimizer.step()
            totals += torch.tensor([loss.item() * len(idx), len(idx)])
        dist.all_reduce(totals)
        epoch_loss = (totals[0] / totals[1]).item()
        history.append({"epoch": epoch, "loss": round(epoch_loss, 6)})
        if rank == 0:
            save_atomic(os.path.join(ckpt_dir, f"checkpoint-{epoch:04d}.pt"),
                        lambda f: torch.save({"epoch": epoch, "model": model.state_dict(), "history": history}, f))
            print(f"epoch {epoch}/{args.epochs} loss={epoch_loss:.4f} ranks={world}", flush=True)
        time.sleep(args.sleep)

    if rank == 0:
        buf = io.BytesIO()
        torch.save(model.state_dict(), buf)
        weights = {k: v.tolist() for k, v in model.state_dict().items()}
        summary = f"model: {model_name}\nnodes: {world}\nepochs: {args.epochs}\nhistory: {json.dumps(history)}\n"

        def write_zip(f):
            with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(f"{model_name}.pt", buf.getvalue())
                z.writestr(f"{model_name}.weights.json", json.dumps(weights, indent=1))
                z.writestr("summary.txt", summary)
        save_atomic(archive, write_zip)
        print(f"training finished, archive {archive} ({os.path.getsize(archive)} bytes)", flush=True)
    save_atomic(os.path.join(log_dir, f"node-{rank}.json"),  # per-node log, collected into nodes/<rank>/
                lambda f: f.write(json.dumps({"rank": rank, "world": world, "samples": len(x),
                                              "host": platform.node()}).encode()))
    dist.barrier()
    dist.destroy_process_group()
    # DDP keeps the replicas equal: every rank prints the same digest of its parameters.
    flat = [round(float(v), 6) for p in model.parameters() for v in p.detach().flatten()]
    digest = hashlib.sha256(json.dumps(flat).encode()).hexdigest()[:16]
    print(f"rank {rank}/{world} done, parameters {digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
