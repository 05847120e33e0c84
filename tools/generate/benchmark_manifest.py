"""Writes (or checks) pvr_keras/benchmarks/manifest.json: the SHA-256 of every split of every
token and Boolean benchmark config, at each size, computed from the NumPy source.

    python tools/generate/benchmark_manifest.py  # write it (after a new config or version)
    python tools/generate/benchmark_manifest.py --check    # exit 1 if a split's bytes changed

A split whose hash changes under an unchanged version is a changed rule: bump the config's
version (``pvr_keras/benchmarks/catalog.py``, with a release note) before writing.
"""

import argparse
import json
import sys
import time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    from pvr_keras import files
    from pvr_keras.benchmarks import hashes as manifest

    start = time.perf_counter()
    made = manifest.compute()
    print(f"{len(made)} configs hashed in {time.perf_counter() - start:.1f} s")
    old = manifest.manifest() if manifest.PATH.is_file() else {}
    changed = []
    for name, entry in made.items():
        before = old.get(name)
        if before is not None and before != entry:
            same_version = before["version"] == entry["version"]
            changed.append(name + (" (same version: bump it)" if same_version else ""))
    added = sorted(set(made) - set(old))
    removed = sorted(set(old) - set(made))
    if args.check:
        if changed or added or removed:
            for name in changed:
                print(f"changed: {name}", file=sys.stderr)
            for name in added:
                print(f"not in the manifest: {name}", file=sys.stderr)
            for name in removed:
                print(f"in the manifest, not in the catalog: {name}", file=sys.stderr)
            return 1
        print(f"{manifest.PATH}: up to date")
        return 0
    if any(c.endswith("(same version: bump it)") for c in changed):
        print("refusing to write: " + ", ".join(changed), file=sys.stderr)
        return 1
    files.write_text(manifest.PATH, json.dumps(made, indent=1, sort_keys=True) + "\n")
    print(f"wrote {manifest.PATH} ({len(added)} added, {len(changed)} changed, "
          f"{len(removed)} removed)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
