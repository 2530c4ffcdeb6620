#!/usr/bin/env bash
# Installs the built .deb on this machine (as root), runs the desktop window's
# test against /usr/bin/stallscope-desktop, and removes the package again if
# it was not installed before. Not part of npm test: it changes the system.
#
#   npm run desktop:build && sudo bash desktop/scripts/check_deb.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=$(ls -t desktop/build/stallscope_*_amd64.deb | head -1)
had=0
dpkg -s stallscope >/dev/null 2>&1 && had=1
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "./$deb" >/dev/null
echo "installed $deb: $(dpkg-query -W -f '${Package} ${Version} depends: ${Depends}' stallscope)" >&2
status=0
STALLSCOPE_DESKTOP_BINARY=/usr/bin/stallscope-desktop npx vitest run --config desktop/vitest.config.ts || status=$?
[ "$had" = 1 ] || apt-get remove -y -qq stallscope >/dev/null
exit $status
