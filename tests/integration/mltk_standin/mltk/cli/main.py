"""`mltk train` of the MLTK stand-in: MLTK's file layout, no TensorFlow (see ../../README.md)."""
import json
import os
import shutil
import struct
import sys
import time
import zipfile
import zlib

from mltk.core import load_mltk_model
from mltk.utils.path import create_user_dir

EPOCHS = 3
HOLD_TIMEOUT_SECONDS = 60
# Variables the parity tests set through mlt's `environment` setting; printed so that a
# test can compare them with what MLTK's own parsing gives.
SHOWN_VARIABLES = ('TEST', 'TEST2', 'FOO', 'BAR', 'CUDA_VISIBLE_DEVICES', 'VIRTUAL_ENV')


def say(text: str):
    print(text, flush=True)


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG, standing in for training-history.png."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack('>I', len(data)) + body + struct.pack('>I', zlib.crc32(body))
    header = struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) +
            chunk(b'IDAT', zlib.compress(b'\x00\x80')) + chunk(b'IEND', b''))


def write(path: str, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb' if isinstance(data, bytes) else 'w') as f:
        f.write(data)


def hold_if_asked():
    """With MLTK_STANDIN_HOLD, waits (bounded) until that file exists; False on timeout."""
    hold = os.environ.get('MLTK_STANDIN_HOLD')
    if not hold:
        return True
    # Renamed into place: a test that sees the file must never read it half written.
    write(hold + '.waiting.part', f'{os.getpid()}\n')
    os.replace(hold + '.waiting.part', hold + '.waiting')
    say(f'waiting for {hold}')
    deadline = time.monotonic() + HOLD_TIMEOUT_SECONDS
    while not os.path.exists(hold):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def train(args) -> int:
    if not args or args[0].startswith('-'):
        say('Usage: mltk train <model> [--test] [--clean] [--verbose]')
        return 2
    test = '--test' in args
    model = load_mltk_model(args[0], test=test)
    spec = model.base_name + '.py'
    cli_log = create_user_dir('cli_logs') + '/train.log'
    with open(cli_log, 'w') as log:
        log.write(f'mltk train {" ".join(args)}\ncwd: {os.getcwd()}\n')
    say(f'mltk train (stand-in) args: {" ".join(args)}')
    if not os.path.isfile(spec):
        say(f'Failed to find model specification file: {spec} in {os.getcwd()}')
        return 1
    for name in SHOWN_VARIABLES:
        value = os.environ.get(name)
        say(f'env {name}=[{value}]' if value is not None else f'env {name} unset')

    if '--clean' in args:
        say(f'Cleaning {model.log_dir}')
        shutil.rmtree(model.log_dir, ignore_errors=True)
    log_dir = model.log_dir
    say(f'Model log directory: {log_dir}')

    suffix = '.test' if model.test_mode_enabled else ''
    base = model.base_name
    history = {'loss': [], 'accuracy': []}
    for epoch in range(1, EPOCHS + 1):
        history['loss'].append(1.0 / epoch)
        history['accuracy'].append(1.0 - 0.5 / epoch)
        say(f'Epoch {epoch}/{EPOCHS} - loss: {history["loss"][-1]:.4f} - '
            f'accuracy: {history["accuracy"][-1]:.4f}')
        if epoch == 1 and not hold_if_asked():
            say('MLTK_STANDIN_HOLD never appeared, giving up')
            return 1

    files = {
        f'{base}.h5.summary.txt': f'Model: "{base}"\nTotal params: 42\n',
        f'{base}{suffix}.h5': b'\x89HDF\r\n\x1a\n' + b'\x00' * 64,
        f'{base}{suffix}.tflite': b'\x1c\x00\x00\x00TFL3' + b'\x00' * 64,
        f'{base}.tflite.summary.txt': f'{base}{suffix}.tflite: 42 parameters\n',
        'train/training-history.json': json.dumps(history, indent=2) + '\n',
        'train/training-history.png': tiny_png(),
    }
    for rel, data in files.items():
        write(f'{log_dir}/{rel}', data)
    say(f'Generated {len(files)} files in {log_dir}')

    archive = model.archive_name
    with zipfile.ZipFile(archive + '.tmp', 'w', zipfile.ZIP_DEFLATED) as z:
        z.write(spec, spec)
        for rel in (f'{base}{suffix}.h5', f'{base}{suffix}.tflite', f'{base}.h5.summary.txt'):
            z.write(f'{log_dir}/{rel}', rel)
    os.replace(archive + '.tmp', archive)
    say(f'Created model archive: {os.path.abspath(archive)}')
    with open(cli_log, 'a') as log:
        log.write('Training complete\n')
    say('Training complete')
    return 0


def main(argv) -> int:
    if not argv or argv[0] != 'train':
        print('The MLTK stand-in only implements: mltk train <model>', file=sys.stderr)
        return 2
    return train(argv[1:])
