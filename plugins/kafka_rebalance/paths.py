"""Where the project's own files are: the checkout (or installed tree) that holds config/ and expectations/."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXPECTATIONS_DIR = PROJECT_ROOT / "expectations"
