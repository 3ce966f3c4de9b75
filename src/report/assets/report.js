// Draws every chart of the report from the JSON embedded in #report-data with uPlot, then
// records in attributes of the body element how many charts were drawn and from how many points, how many resources
// the page fetched (0 is expected) and how long rendering took.
(function () {
  "use strict";
  var ACCENT = 999;
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var data = JSON.parse(document.getElementById("report-data").textContent);

  function color(group, alpha) {
    var c = group === ACCENT ? "#111111" : PALETTE[group % PALETTE.length];
    return alpha ? c + alpha : c;
  }

  // uPlot wants one shared x array: merge every series' x values, nulls elsewhere.
  function align(series) {
    var all = [];
    series.forEach(function (s) { for (var i = 0; i < s.x.length; i++) all.push(s.x[i]); });
    all.sort(function (a, b) { return a - b; });
    var xs = [];
    for (var i = 0; i < all.length; i++) {
      if (xs.length === 0 || xs[xs.length - 1] !== all[i]) xs.push(all[i]);
    }
    var index = new Map();
    xs.forEach(function (x, i) { index.set(x, i); });
    var out = [xs];
    series.forEach(function (s) {
      var ys = new Array(xs.length).fill(null);
      for (var i = 0; i < s.x.length; i++) ys[index.get(s.x[i])] = s.y[i];
      out.push(ys);
    });
    return out;
  }

  function seriesOptions(s) {
    var c = color(s.group);
    // A line of one or two points would not show: draw its points.
    var few = s.x.length < 3;
    var none = function () { return null; };
    switch (s.style) {
      case "points":
        return { label: s.label, stroke: c, width: 1, paths: none,
                 points: { show: true, size: 4, width: 0, fill: color(s.group, "99"), stroke: color(s.group, "99") } };
      case "marker":
        return { label: s.label, stroke: c, width: 0, paths: none,
                 points: { show: true, size: 12, width: 2.5, stroke: c, fill: "#ffffff00" } };
      case "trace":
        return { label: s.label, stroke: color(s.group, "aa"), width: 1, spanGaps: true, points: { show: few } };
      case "step":
        return { label: s.label, stroke: c, width: 2, spanGaps: true,
                 paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } };
      default:
        return { label: s.label, stroke: c, width: 2, spanGaps: true, points: { show: few } };
    }
  }

  // Shades each band (a phase) behind the series and writes its name at the top.
  function shade(u, bands) {
    var ctx = u.ctx, top = u.bbox.top, height = u.bbox.height;
    ctx.save();
    ctx.font = Math.round(11 * devicePixelRatio) + "px sans-serif";
    bands.forEach(function (b, i) {
      var left = u.bbox.left, right = left + u.bbox.width;
      var x0 = Math.max(left, u.valToPos(b.x0, "x", true));
      var x1 = Math.min(right, u.valToPos(b.x1, "x", true));
      if (x1 <= x0) return;
      ctx.fillStyle = i % 2 ? "rgba(255,127,14,0.08)" : "rgba(31,119,180,0.08)";
      ctx.fillRect(x0, top, x1 - x0, height);
      ctx.fillStyle = "#555";
      ctx.fillText(b.label, x0 + 4 * devicePixelRatio, top + 14 * devicePixelRatio);
    });
    ctx.restore();
  }

  function draw(el, spec) {
    var aligned = align(spec.series);
    var opts = {
      width: Math.max(400, el.clientWidth || 1200),
      height: 360,
      legend: { live: false },
      cursor: { points: { show: false } },
      scales: { x: { time: false } },
      axes: [
        { label: spec.x_label, stroke: "#333", grid: { stroke: "#eee" } },
        { label: spec.y_label, stroke: "#333", grid: { stroke: "#eee" }, size: 60 }
      ],
      series: [{ label: spec.x_label }].concat(spec.series.map(function (s) {
        var o = seriesOptions(s);
        if (s.right) o.scale = "y2";
        return o;
      }))
    };
    if (spec.y2_label) {
      opts.scales.y2 = {};
      opts.axes.push({ scale: "y2", side: 1, label: spec.y2_label, stroke: "#333", grid: { show: false }, size: 60 });
    }
    if (spec.bands && spec.bands.length) {
      var first = spec.bands[0].x0, last = spec.bands[spec.bands.length - 1].x1;
      opts.scales.x.range = function (u, min, max) {
        return [Math.min(min, first), Math.max(max, last)];
      };
      opts.hooks = { drawClear: [function (u) { shade(u, spec.bands); }] };
      el.setAttribute("data-bands", String(spec.bands.length));
    }
    // Log axes (base 10) for scaling charts.
    if (spec.x_log) {
      opts.scales.x.distr = 3;
      opts.scales.x.log = 10;
    }
    if (spec.y_log) {
      opts.scales.y = { distr: 3, log: 10 };
    }
    if (spec.x_names) {
      var names = spec.x_names;
      opts.scales.x.range = function () { return [-0.5, names.length - 0.5]; };
      opts.axes[0].splits = function () { return names.map(function (_, i) { return i; }); };
      opts.axes[0].values = function (u, splits) {
        return splits.map(function (v) { return names[v] === undefined ? "" : names[v]; });
      };
    }
    new uPlot(opts, aligned, el);
    var points = 0;
    spec.series.forEach(function (s) { points += s.y.length; });
    el.setAttribute("data-points", String(points));
    return points;
  }

  var charts = document.querySelectorAll("[data-chart]");
  var drawn = 0, empty = 0;
  charts.forEach(function (el) {
    var spec = data.charts[el.getAttribute("data-chart")];
    try {
      if (!spec || draw(el, spec) === 0) {
        empty++;
        el.setAttribute("data-empty", "1");
      } else {
        drawn++;
      }
    } catch (e) {
      window.__reportErrors.push("chart " + el.getAttribute("data-chart") + ": " + e);
    }
  });
  var body = document.body;
  body.setAttribute("data-charts-total", String(charts.length));
  body.setAttribute("data-charts-drawn", String(drawn));
  body.setAttribute("data-charts-empty", String(empty));
  body.setAttribute("data-resources", String(performance.getEntriesByType("resource").length));
  body.setAttribute("data-render-ms", String(Math.round(performance.now())));
  window.__reportFlush();
  body.setAttribute("data-report-ready", "1");
})();
