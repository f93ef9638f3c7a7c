"""The report's script, inlined into every HTML report: builds the per-person and per-leaf
tables from the embedded data, sorts them by any column and filters them. Plain JavaScript, no
library, no network; the figures and the model need none of it."""

JS = r"""
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const SHOWN_LEAVES = 6, SHOWN_PAIRS = 3;  // a cell links this many leaves (of a forest: tree-leaf pairs); its tooltip lists them all
  const LEAF_QUERY = /^(?:tree:(\d+) +)?leaf:(\d+)$/;  // what a reader types in a filter, never provenance
  const NUMBER = /^[-+]?[\d.,]+$/;

  function pct(v) { return v === null || v === undefined ? "" : (100 * v).toFixed(1) + " %"; }
  function num(v) { return v === null || v === undefined ? "" : Number(v).toLocaleString("en"); }
  function anchorOf(tree, id) { return tree === null ? "node-" + id : "tree-" + tree + "-node-" + id; }

  // Per group, the leaves it can reach, from the attack's leaf pairs (columns: group g's are
  // tree/leaf[offsets[g]:offsets[g+1]]; tree is null for a single tree): { trees, ids, text }.
  // Without leaf pairs (a rule set's audit, an older result) each group keeps its provenance text.
  function groupLeaves(groups) {
    const lp = groups.leaf_pairs;
    if (!lp) return groups.provenance;
    const out = new Array(lp.offsets.length - 1);
    for (let k = 0; k < out.length; k++) {
      const lo = lp.offsets[k], hi = lp.offsets[k + 1];
      const cell = { trees: lp.tree === null ? null : lp.tree.slice(lo, hi), ids: lp.leaf.slice(lo, hi) };
      cell.text = runs(cell).map(function (r) {
        return (r.tree === null ? "" : "tree " + r.tree + " ") + (r.ids.length === 1 ? "leaf " : "leaves ") + r.ids.join(", ");
      }).join("; ");
      out[k] = cell;
    }
    return out;
  }
  function runs(cell) {  // the cell's leaves tree by tree: [{ tree, ids }]
    if (cell.trees === null) return [{ tree: null, ids: cell.ids }];
    const out = [];
    cell.ids.forEach(function (id, i) {
      const t = cell.trees[i];
      if (!out.length || out[out.length - 1].tree !== t) out.push({ tree: t, ids: [] });
      out[out.length - 1].ids.push(id);
    });
    return out;
  }
  function leafCell(value) {
    const span = document.createElement("span");
    if (value === null || typeof value !== "object") { span.textContent = value === null ? "" : String(value); return span; }
    const most = value.trees === null ? SHOWN_LEAVES : SHOWN_PAIRS;
    let shown = 0;
    runs(value).forEach(function (r, j) {
      if (shown >= most) return;
      if (j) span.append("; ");
      span.append((r.tree === null ? "" : "tree " + r.tree + " ") + (r.ids.length === 1 ? "leaf " : "leaves "));
      r.ids.forEach(function (id, i) {
        if (shown >= most) return;
        if (i) span.append(", ");
        const a = document.createElement("a");
        a.href = "#" + anchorOf(r.tree, id);
        a.textContent = String(id);
        span.append(a);
        shown++;
      });
    });
    if (value.ids.length > shown) {
      span.append(" … +" + (value.ids.length - shown));
      span.title = value.text;
    }
    return span;
  }
  function reaches(cell, query) {  // does a cell of leaves (or of the leaf table) hold the queried leaf?
    const tree = query[1] === undefined ? null : Number(query[1]), id = Number(query[2]);
    if (cell === null || typeof cell !== "object") return false;
    if (cell.ids === undefined) return cell.id === id && (tree === null || cell.tree === tree);
    return cell.ids.some(function (x, i) { return x === id && (tree === null || (cell.trees !== null && cell.trees[i] === tree)); });
  }

  // -- rows --------------------------------------------------------------------------------------
  function peopleTable(a) {
    // Columns: row, status, confidence (and the prior's), true value, guess, leaves, known values.
    const p = a.people, g = a.groups, n = p.row.length, hasTruth = p.truth !== null;
    const columns = [{ label: "row", kind: "num", title: "row in your CSV, 0 = the first data row" },
                     { label: "status", kind: "text" }];
    if (hasTruth) {
      columns.push({ label: "confidence in true value", kind: "pct" });
      if (p.prior) columns.push({ label: "prior alone", kind: "pct" });
      columns.push({ label: "true " + a.sensitive, kind: "text" });
    } else {
      columns.push({ label: "confidence in guess", kind: "pct" });
    }
    columns.push({ label: "attacker's guess", kind: "text" }, { label: "leaves", kind: "leaves" });
    a.quasi_identifiers.forEach(function (q) { columns.push({ label: q, kind: "text" }); });
    const guess = g.posterior.map(function (row) { return row.indexOf(Math.max.apply(null, row)); });
    const leaves = groupLeaves(g);
    const certain = g.posterior.map(function (row) { return Math.max.apply(null, row) >= 1 - 1e-9; });
    const rows = new Array(n);
    for (let i = 0; i < n; i++) {
      const k = p.group[i], target = p.target === null || p.target[i] === 1;
      let status = "", cls = "", row;
      if (hasTruth) {
        const t = p.truth[i], conf = g.posterior[k][t], prior = p.prior ? p.prior[t] : null;
        if (!target) status = "known individual";
        else if (certain[k] && guess[k] === t) { status = "proved"; cls = "proved"; }
        else if (certain[k]) status = "certain, wrong";
        else if (conf >= 0.9 - 1e-9) { status = prior !== null && prior < 0.9 - 1e-9 ? "≥ 0.9, beyond prior" : "≥ 0.9"; cls = "high"; }
        row = [p.row[i], status, conf];
        if (p.prior) row.push(prior);
        row.push(a.values[t]);
      } else {
        if (certain[k]) { status = "certain"; cls = "proved"; }
        row = [p.row[i], status, Math.max.apply(null, g.posterior[k])];
      }
      row.push(a.values[guess[k]], leaves[k]);
      rows[i] = { cells: row.concat(g.qi[k]), cls: cls, risk: cls === "proved" ? 2 : cls === "high" ? 1 : 0 };
    }
    const leafExample = g.leaf_pairs && g.leaf_pairs.tree !== null ? "tree:0 leaf:7" : "leaf:7";
    return { columns: columns, rows: rows, sortBy: 2, descending: true, limit: 100, riskFilter: true, noun: "people", leafExample: leafExample,
             total: p.total === undefined ? n : p.total };
  }

  function leafTable(a, index) {
    const hasTruth = a.people.truth !== null, e = a.exposure;
    const byLeaf = e.length > 0 && e[0].leaf !== null && e[0].leaf !== undefined;
    const high = e.length && e[0].beyond !== undefined ? "beyond" : "high";
    const columns = [
      { label: byLeaf ? "leaf" : "source", kind: byLeaf ? "leaf" : "text" },
      { label: "rule (path to the leaf)", kind: "text" },
      { label: "published", kind: "text" },
      { label: "people reaching it", kind: byLeaf ? "who" : "num", title: "people whose known values can land in this leaf (click: list them)" },
      { label: "decided by it alone", kind: "num", title: "people who can land only in this leaf" },
    ];
    if (hasTruth) columns.push({ label: high === "beyond" ? "at ≥ 0.9, beyond prior" : "at ≥ 0.9", kind: "num" });
    columns.push({ label: "proved", kind: "num", title: "certain and right" });
    if (hasTruth) columns.push({ label: "certain, wrong", kind: "num" }, { label: "mean confidence", kind: "pct" },
                               { label: "mean prior", kind: "pct" });
    columns.push({ label: "discloses", kind: "text", title: "the values proved of its people" });
    const rows = e.map(function (r) {
      const tree = r.tree === undefined ? null : r.tree;
      const leaf = byLeaf ? { text: r.source, tree: tree, id: r.leaf, anchor: r.anchor } : r.source;
      const who = byLeaf ? { count: r.people, tree: tree, leaf: r.leaf, attack: index } : r.people;
      const cells = [leaf, r.rule || "", r.published || "", who, r.sole];
      if (hasTruth) cells.push(r[high]);
      cells.push(r.certain_right);
      if (hasTruth) cells.push(r.certain_wrong, r.mean_confidence === undefined ? null : r.mean_confidence,
                               r.mean_prior === undefined ? null : r.mean_prior);
      cells.push(r.discloses);
      const cls = r.certain_right > 0 ? "proved" : (hasTruth && r[high] > 0 ? "high" : "");
      return { cells: cells, cls: cls, risk: 0, id: byLeaf ? "leafrow-" + anchorOf(tree, r.leaf) : null };
    });
    return { columns: columns, rows: rows, sortBy: null, descending: true, limit: 50, riskFilter: false, noun: byLeaf ? "leaves" : "sources",
             total: a.exposure_total === undefined ? e.length : a.exposure_total };
  }

  // -- the table widget ----------------------------------------------------------------------------
  function cellNode(value, kind) {
    const td = document.createElement("td");
    if (kind === "num" || kind === "pct" || kind === "who") td.className = "num";
    if (kind === "leaves") { td.className = "leaves"; td.append(leafCell(value)); }
    else if (kind === "who") {
      const button = document.createElement("button");
      button.className = "link";
      button.textContent = num(value.count);
      button.title = "list the people who can reach " + (value.tree === null ? "" : "tree " + value.tree + " ") + "leaf " + value.leaf;
      button.dataset.showLeaf = String(value.leaf);
      if (value.tree !== null) button.dataset.showTree = String(value.tree);
      button.dataset.attack = String(value.attack);
      td.append(button);
    }
    else if (kind === "leaf" && value && typeof value === "object") {
      const link = document.createElement("a");
      link.href = "#" + (value.anchor || anchorOf(value.tree === undefined ? null : value.tree, value.id));
      link.textContent = value.text;
      td.append(link);
    } else {
      td.textContent = kind === "pct" ? pct(value) : kind === "num" ? num(value) : (value === null ? "" : String(value));
      if (kind === "text" && NUMBER.test(td.textContent)) td.className = "nowrap";  // a ZIP code or an id never wraps mid-number
    }
    return td;
  }
  function textOf(value) {
    if (value && typeof value === "object") return value.text !== undefined ? value.text : String(value.count);
    return String(value === null ? "" : value);
  }
  function compare(kind) {
    if (kind === "num" || kind === "pct") return function (x, y) {
      return (x === null ? -Infinity : x) - (y === null ? -Infinity : y);
    };
    if (kind === "leaf") return function (x, y) { return (x.tree || 0) - (y.tree || 0) || (x.id || 0) - (y.id || 0); };
    if (kind === "who") return function (x, y) { return x.count - y.count; };
    return function (x, y) { return textOf(x).localeCompare(textOf(y), "en", { numeric: true }); };
  }

  function Table(host, spec, attackIndex) {
    const state = { query: "", risky: false, limit: spec.limit, sortBy: spec.sortBy, descending: spec.descending };
    const controls = document.createElement("div"), wrap = document.createElement("div");
    controls.className = "controls"; wrap.className = "tablewrap";
    const search = document.createElement("input");
    search.type = "search";
    search.placeholder = spec.noun === "people" ? "filter: any value, or " + spec.leafExample : "filter: any value";
    search.setAttribute("aria-label", "filter the " + spec.noun);
    controls.append(search);
    let risky = null;
    if (spec.riskFilter) {
      const label = document.createElement("label");
      risky = document.createElement("input");
      risky.type = "checkbox";
      label.append(risky, " only people proved or at ≥ 0.9");
      controls.append(label);
    }
    const count = document.createElement("span"); count.className = "count"; controls.append(count);
    const table = document.createElement("table"), thead = document.createElement("thead"), tbody = document.createElement("tbody");
    const header = document.createElement("tr");
    spec.columns.forEach(function (c, j) {
      const th = document.createElement("th");
      th.textContent = c.label;
      if (c.title) th.title = c.title;
      th.addEventListener("click", function () {
        state.descending = state.sortBy === j ? !state.descending : (c.kind === "num" || c.kind === "pct");
        state.sortBy = j; render();
      });
      header.append(th);
    });
    thead.append(header); table.append(thead, tbody); wrap.append(table);
    const more = document.createElement("div"); more.className = "more controls";
    const moreButton = document.createElement("button"), allButton = document.createElement("button");
    moreButton.textContent = "show 500 more"; allButton.textContent = "show all";
    more.append(moreButton, allButton);
    host.append(controls, wrap, more);
    table.dataset.table = spec.noun;
    table.className = spec.noun;

    function matches() {
      const q = state.query.trim().toLowerCase(), leafQuery = LEAF_QUERY.exec(q);
      return spec.rows.filter(function (r) {
        if (state.risky && r.risk === 0) return false;
        if (!q) return true;
        if (leafQuery) {
          return spec.columns.some(function (c, j) {
            return (c.kind === "leaves" || c.kind === "leaf") && reaches(r.cells[j], leafQuery);
          });
        }
        if (r.text === undefined) r.text = r.cells.map(textOf).join("\u0001").toLowerCase();
        return r.text.indexOf(q) >= 0;
      });
    }
    function render() {
      let rows = matches();
      if (state.sortBy !== null) {
        const cmp = compare(spec.columns[state.sortBy].kind), j = state.sortBy, sign = state.descending ? -1 : 1;
        rows = rows.slice().sort(function (x, y) { return sign * cmp(x.cells[j], y.cells[j]) || y.risk - x.risk; });
      }
      Array.from(header.children).forEach(function (th, j) {
        if (j === state.sortBy) th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
        else th.removeAttribute("aria-sort");
      });
      const shown = rows.slice(0, state.limit), frag = document.createDocumentFragment();
      shown.forEach(function (r) {
        const tr = document.createElement("tr");
        if (r.cls) tr.className = r.cls;
        if (r.id) tr.id = r.id;
        r.cells.forEach(function (v, j) { tr.append(cellNode(v, spec.columns[j].kind)); });
        frag.append(tr);
      });
      tbody.replaceChildren(frag);
      count.textContent = "showing " + num(shown.length) + " of " + num(rows.length) + " " + spec.noun +
        (rows.length === spec.rows.length ? "" : " matching (" + num(spec.rows.length) + " in all)") +
        (spec.total > spec.rows.length ? "; the page lists " + num(spec.rows.length) + " of " + num(spec.total) + ", the JSON every one" : "");
      more.hidden = shown.length >= rows.length;
      moreButton.textContent = "show " + num(Math.min(500, Math.max(rows.length - shown.length, 0))) + " more";
      table.dataset.rows = String(shown.length);
    }
    search.addEventListener("input", function () { state.query = search.value; state.limit = spec.limit; render(); });
    if (risky) risky.addEventListener("change", function () { state.risky = risky.checked; state.limit = spec.limit; render(); });
    moreButton.addEventListener("click", function () { state.limit += 500; render(); });
    allButton.addEventListener("click", function () { state.limit = Infinity; render(); });
    render();
    return { filter: function (q) { search.value = q; state.query = q; state.limit = spec.limit; render(); } };
  }

  const people = [];
  document.querySelectorAll("[data-table]").forEach(function (host) {
    const i = Number(host.dataset.attack), a = data.attacks[i];
    if (host.dataset.table === "people") people[i] = Table(host, peopleTable(a), i);
    else Table(host, leafTable(a, i), i);
  });
  document.addEventListener("click", function (event) {
    const button = event.target.closest ? event.target.closest("[data-show-leaf]") : null;
    if (!button) return;
    const i = Number(button.dataset.attack), t = people[i];
    if (!t) return;
    t.filter((button.dataset.showTree === undefined ? "" : "tree:" + button.dataset.showTree + " ") + "leaf:" + button.dataset.showLeaf);
    document.getElementById("people-" + i).scrollIntoView();
  });
  document.body.dataset.ready = "1";
})();
"""
