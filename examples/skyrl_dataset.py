"""Write the SkyRL prompt dataset for the dealroom environment: one row per (room, sample).

    python examples/skyrl_dataset.py ROOMS_GLOB OUT.parquet --episodes RUNS_DIR \
        [--sub sub@http://SUBHOST:8001/v1] [--max-turns 30]

Each row names ``env_class = "dealroom"`` and the environment's ``extras`` (room, where the
episodes' run folders go, the frozen sub-agents, the turn budget); the prompt is a
placeholder: the environment's ``init`` returns the room's real first messages.
"""

import argparse
import glob
from pathlib import Path

import pandas as pd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rooms")
    parser.add_argument("out", type=Path)
    parser.add_argument("--episodes", type=Path, required=True)
    parser.add_argument("--sub", default="oracle")
    parser.add_argument("--max-turns", type=int, default=30)
    args = parser.parse_args()
    rows = [{"prompt": [{"role": "user", "content": f"Review the data room {Path(room).name}."}],
             "env_class": "dealroom",
             "extras": {"room": str(Path(room).resolve()), "out": str(args.episodes.resolve()),
                        "sub": args.sub, "max_turns": args.max_turns}}
            for room in sorted(glob.glob(args.rooms)) if (Path(room) / "room.json").is_file()]
    if not rows:
        raise SystemExit(f"no room matches {args.rooms}")
    pd.DataFrame(rows).to_parquet(args.out)
    print(f"{len(rows)} rooms -> {args.out}")


if __name__ == "__main__":
    main()
