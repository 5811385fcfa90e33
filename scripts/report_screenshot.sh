#!/usr/bin/env bash
# Writes the report of a results database and a screenshot of its page as a browser 1400 px wide shows
# it, to check by eye that the report reads well (tables fit the width, plots are legible).
# Usage: scripts/report_screenshot.sh DB OUTDIR [HEIGHT]
#   OUTDIR gets what `varex report` writes (CSV files, index.html, plots.json) and screenshot.png: the
#   page, 1400 px wide, cut below its last content. HEIGHT is the browser window's height (default
#   16000 px); a page taller than that is cut off, and the script says so.
#   $VAREX is the varex binary (default: build/varex). Installs chromium with apt-get when it is missing.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 DB OUTDIR [HEIGHT]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
db="$1"
out="$2"
height="${3:-16000}"
width=1400
varex="${VAREX:-$root/build/varex}"

if ! command -v chromium >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "report_screenshot: installing chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi

"$varex" report --db "$db" --out "$out" >/dev/null
out="$(cd "$out" && pwd)"
shot="$out/screenshot.png"

# Root may not use chromium's sandbox; the page is our own file, with nothing fetched from the network.
sandbox=()
[ "$(id -u)" -eq 0 ] && sandbox=(--no-sandbox)
chromium --headless "${sandbox[@]}" --disable-gpu --hide-scrollbars --screenshot="$shot" \
  --window-size="$width,$height" "file://$out/index.html" >"$out/chromium.log" 2>&1 ||
  { cat "$out/chromium.log" >&2; exit 1; }

# The window is taller than most pages: cut the blank bottom off (PIL comes with python3-matplotlib).
# The page's content ends 40 px before the window's right edge, so anything in the last 24 px overflowed.
/usr/bin/python3 - "$shot" <<'EOF'
import sys
from PIL import Image, ImageChops


def drawn(image):
    """The box of what is not white in `image`, or None."""
    return ImageChops.difference(image, Image.new("RGB", image.size, "white")).getbbox()


path = sys.argv[1]
image = Image.open(path).convert("RGB")
width, height = image.size
content = drawn(image)
if content and content[3] >= height - 1:
    print(f"report_screenshot: the page is taller than {height} px; pass a larger HEIGHT", file=sys.stderr)
if drawn(image.crop((width - 24, 0, width, height))):
    print("report_screenshot: content reaches the right edge: the page overflows horizontally", file=sys.stderr)
bottom = min(height, (content[3] if content else 0) + 24)
image.crop((0, 0, width, bottom)).save(path)
print(f"{path} ({width} x {bottom} px)")
EOF
