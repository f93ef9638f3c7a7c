"""The report's stylesheet, inlined into every HTML report (screen and print)."""

CSS = """
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bad: #b91c1c; --good: #15803d; --warn: #b45309; --accent: #c2410c; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); margin: 0; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin: 24px 0 6px; }
.meta, .note, figcaption { color: var(--muted); font-size: 13px; }
.note.warn { color: #8a4b00; background: #fff6e5; padding: 4px 8px; border-left: 3px solid #e0a030; }
nav a { margin-right: 14px; font-size: 14px; }
a { color: #1d4ed8; }
.card { border: 1px solid var(--line); border-left: 6px solid var(--muted); border-radius: 6px; padding: 10px 16px; margin: 12px 0; }
.card.fails { border-left-color: var(--bad); }
.card.meets { border-left-color: var(--good); }
.card.unknown { border-left-color: var(--warn); }
.card.scope { border-left-color: #1d4ed8; }
.card.both { border-left-color: var(--ink); }
table.facts { width: auto; font-size: 14px; }
table.facts th, table.facts td { border: none; padding: 2px 12px 2px 0; background: none; }
table.facts th { position: static; cursor: default; color: var(--muted); font-weight: 600; white-space: nowrap; }
.badge { display: inline-block; font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 10px; color: #fff; background: var(--muted); margin-right: 8px; }
.fails .badge { background: var(--bad); } .meets .badge { background: var(--good); } .unknown .badge { background: var(--warn); }
.headline { font-size: 17px; font-weight: 600; }
.card ul { margin: 6px 0; padding-left: 20px; }
ol.advice li { margin: 6px 0; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.threatline { background: #f3f4f6; padding: 4px 8px; border-radius: 4px; display: inline-block; }
figure { margin: 8px 0 16px; }
svg.figure { width: 100%; max-width: 760px; height: auto; display: block; }
[hidden] { display: none !important; }
.controls { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; margin: 6px 0; font-size: 13px; }
.controls input[type=search] { padding: 4px 8px; min-width: 260px; border: 1px solid #cbd5e1; border-radius: 4px; }
.count { color: var(--muted); font-size: 13px; }
.tablewrap { overflow-x: auto; max-height: 560px; overflow-y: auto; border: 1px solid var(--line); border-radius: 4px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #f3f4f6; position: sticky; top: 0; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " ▲"; } th[aria-sort=descending]::after { content: " ▼"; }
table.leaves th { white-space: normal; vertical-align: bottom; min-width: 3.5em; }
table.leaves td:nth-child(2) { min-width: 200px; }
table.leaves td:nth-child(3) { min-width: 120px; }
table.leaves td:first-child, td.nowrap { white-space: nowrap; }
td.leaves { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.proved td { background: #fee2e2; } tr.high td { background: #ffedd5; }
button { font: inherit; font-size: 13px; padding: 3px 10px; border: 1px solid #cbd5e1; background: #fff; border-radius: 4px; cursor: pointer; }
button.link { font-size: inherit; border: none; padding: 0; color: #1d4ed8; text-decoration: underline; background: none; }
pre.tree { background: #f9fafb; border: 1px solid var(--line); padding: 10px; overflow-x: auto; max-height: 640px; line-height: 1.45; }
pre.tree span { display: block; white-space: pre; }
pre.tree span:target, tr:target td { background: #fde68a; }
pre.tree span.exposed { color: var(--bad); font-weight: 600; }
.printnote { display: none; }
td.hash { font-family: ui-monospace, monospace; font-size: 11px; overflow-wrap: anywhere; }
#release .tablewrap { margin-top: 12px; }
table.facts th { text-align: left; white-space: nowrap; vertical-align: top; }
@media print {
  body { background: #fff; } main { max-width: none; padding: 0; }
  .controls, .more, nav { display: none; }
  .tablewrap, pre.tree { max-height: none; overflow: visible; }
  h2, h3 { break-after: avoid; } figure, .card, tr { break-inside: avoid; }
  @page { size: A4 landscape; margin: 12mm; }
  table { font-size: 10px; } th, td { padding: 2px 3px; } th { white-space: normal; hyphens: auto; }
  table.leaves td:nth-child(2) { min-width: 0; } td { overflow-wrap: break-word; }
  td.num, td.nowrap, td.leaves { white-space: nowrap; overflow-wrap: normal; }
  th { position: static; }
  #model.long pre.tree, #model.long h3 { display: none; } #model.long .printnote { display: block; }
}
"""
