#!/usr/bin/env bash
# Install headless Chromium from the system's packages, for the test that loads the HTML report
# in a real browser (tests/integration/report). Idempotent and instant once a browser is on PATH.
#
#   .ci/install-browser.sh
#
# Where it cannot install (not root and no passwordless sudo, or no apt-get) it says why and
# exits 0: the browser test then skips with that reason. With OMNIQUAL_REQUIRE_BROWSER=1 (set by
# .ci/run) it exits 1 instead, so CI can never silently skip the browser test.
set -euo pipefail

# The names the test looks for (tests/integration/report/devtools_page.py: BROWSER_NAMES).
for name in ${OMNIQUAL_BROWSER:-chromium chromium-browser google-chrome google-chrome-stable}; do
  if command -v "$name" >/dev/null 2>&1; then
    echo "browser: $(command -v "$name")"
    exit 0
  fi
done

cannot() {
  echo "install-browser: cannot install Chromium: $1" >&2
  echo "install-browser: the browser test of the HTML report will skip" >&2
  if [[ "${OMNIQUAL_REQUIRE_BROWSER:-}" == "1" ]]; then
    echo "install-browser: OMNIQUAL_REQUIRE_BROWSER=1: failing instead" >&2
    exit 1
  fi
  exit 0
}

if ! command -v apt-get >/dev/null 2>&1; then
  cannot "no apt-get on this system; install Chromium with its package manager"
fi
if [[ "$(id -u)" == "0" ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  cannot "not root and no passwordless sudo (run: sudo apt-get install chromium)"
fi

export DEBIAN_FRONTEND=noninteractive
# Fresh images ship without package lists: fetch them only when chromium is unknown.
if ! apt-cache show chromium >/dev/null 2>&1; then
  "${as_root[@]}" apt-get update -qq
fi
# A font, so the screenshot shows text; recommends (sandbox helper, desktop bits) are not needed.
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core \
  >/dev/null
echo "browser: $(command -v chromium)"
