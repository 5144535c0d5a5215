// The fault part of the host-health script (host-health-command.ts joins it
// in): a second nvidia-smi query, apart from the 1 Hz GPU query because a
// field a driver does not know fails the whole query (wire-formats §5.1) and
// must never cost the VRAM figures; the kernel log's `NVRM: Xid` lines; and on
// AMD the hwmon and RAS files of each card. Every value the script uses comes
// from its positional arguments ($4 how the kernel log is read, $5 since when);
// the field lists are fixed text.

/** NVIDIA fault fields, driver 535+ names (clocks_event_reasons.*); canonical names, so the header reads back the same. */
const COMMON_FIELDS = [
  'index',
  'uuid',
  'pci.bus_id',
  'ecc.mode.current',
  'ecc.errors.corrected.volatile.total',
  'ecc.errors.uncorrected.volatile.total',
  'ecc.errors.corrected.aggregate.total',
  'ecc.errors.uncorrected.aggregate.total',
  'retired_pages.single_bit_ecc.count',
  'retired_pages.double_bit.count',
  'retired_pages.pending',
];
const REMAP_FIELDS = ['remapped_rows.correctable', 'remapped_rows.uncorrectable', 'remapped_rows.pending'];
const REASONS = ['gpu_idle', 'applications_clocks_setting', 'sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown', 'sync_boost'];

/**
 * The queries tried in order while nvidia-smi answers "is not a valid field": the new reason
 * names; the older `clocks_throttle_reasons.*` (drivers before 535); and without remapped rows
 * (drivers before Ampere's row remapping was reported).
 */
export const FAULT_QUERIES: readonly string[] = [
  [...COMMON_FIELDS, ...REMAP_FIELDS, ...REASONS.map((r) => `clocks_event_reasons.${r}`)].join(','),
  [...COMMON_FIELDS, ...REMAP_FIELDS, ...REASONS.map((r) => `clocks_throttle_reasons.${r}`)].join(','),
  [...COMMON_FIELDS, ...REASONS.map((r) => `clocks_throttle_reasons.${r}`)].join(','),
];

/**
 * The most the fault part can take (s): three nvidia-smi tries of 5 s, the journal probe and read,
 * dmesg. The health round's deadline adds it, so a hung nvidia-smi (a GPU off the bus) costs the fault
 * figures of that round, never the disk and memory figures.
 */
export const FAULTS_DEADLINE_S = 3 * 5 + 3 + 4 + 4 + 2;

/** Xid lines kept per read (the kernel log can hold thousands after a bad night). */
export const XID_LINES_CAP = 32;

const nvidia =
  'if [ "$gpu" = nvidia ]; then for q in ' +
  FAULT_QUERIES.map((q) => `"${q}"`).join(' ') +
  '; do r=$(timeout 5 nvidia-smi --query-gpu="$q" --format=csv,nounits 2>&1); c=$?; echo "@nvq $c $q"; printf "%s\\n" "$r" | head -n 65; ' +
  'case "$c:$r" in 0:*) break;; *"is not a valid field"*) ;; *) break;; esac; done; fi';

// journalctl first (its own timestamps, since the last read); a user outside systemd-journal/adm sees no
// kernel lines at all, which the `-n 1` probe tells apart from "no Xid". dmesg next (kernel.dmesg_restrict).
const journal =
  'if [ "$klog" != dmesg ]; then if ! command -v journalctl >/dev/null 2>&1; then echo "@klog journalctl missing"; ' +
  'elif [ -z "$(timeout 3 journalctl -k -b -q -n 1 --no-pager 2>/dev/null)" ]; then echo "@klog journalctl denied $(id -un) $(id -Gn)"; ' +
  'else j=1; echo "@klog journalctl"; if [ "$ks" = 0 ]; then timeout 4 journalctl -k -b -q --no-pager -o short-iso-precise 2>&1; ' +
  `else timeout 4 journalctl -k -q --no-pager -o short-iso-precise --since "@$ks" 2>&1; fi | grep -F "NVRM: Xid" | tail -n ${XID_LINES_CAP}; fi; fi`;
const dmesg =
  'if [ $j = 0 ] && [ "$klog" != journalctl ]; then if ! command -v dmesg >/dev/null 2>&1; then echo "@klog dmesg missing"; ' +
  `else echo "@klog dmesg"; timeout 4 dmesg --time-format iso 2>&1 | grep -E "NVRM: Xid|^dmesg: " | tail -n ${XID_LINES_CAP}; fi; fi`;
const kernel = `if [ "$klog" != off ]; then j=0; echo "@klog_now $(date +%s)"; ${journal}; ${dmesg}; fi`;

// Per amdgpu card: hwmon temperatures (label, input, crit in m°C), RAS counts ("ue: N" / "ce: N"), bad VRAM pages.
const amd =
  'if [ "$gpu" = amd ]; then echo "@amdfaults"; for c in /sys/class/drm/card[0-9] /sys/class/drm/card[0-9][0-9]; do d=$c/device; [ -e "$d/hwmon" ] || continue; n=${c##*/}; ' +
  'for t in "$d"/hwmon/hwmon*/temp*_input; do [ -r "$t" ] || continue; b=${t%_input}; echo "temp $n ${b##*/} $(cat "${b}_label" 2>/dev/null || echo -) $(cat "$t" 2>/dev/null || echo -) $(cat "${b}_crit" 2>/dev/null || echo -)"; done; ' +
  'if [ -d "$d/ras" ]; then for f in "$d"/ras/*_err_count; do [ -e "$f" ] || continue; if [ -r "$f" ]; then echo "ras $n ${f##*/} $(tr "\\n" " " < "$f")"; else echo "ras $n ${f##*/} unreadable"; fi; done; ' +
  'if [ -r "$d/ras/gpu_vram_bad_pages" ]; then echo "badpages $n $(grep -c . "$d/ras/gpu_vram_bad_pages") $(grep -c ": P" "$d/ras/gpu_vram_bad_pages")"; fi; else echo "noras $n"; fi; done; fi';

/** The fault part of the health script, run after the GPU process reads. */
export const FAULTS_SCRIPT = [nvidia, kernel, amd].join('; ');

export type KernelLogMode = 'auto' | 'journalctl' | 'dmesg' | 'off';
