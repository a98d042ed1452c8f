"use strict";
var frames = [], details, unzoomBtn, searchBtn, matchedText, searching = false;
function init(evt) {
  details = document.getElementById("details").firstChild;
  unzoomBtn = document.getElementById("unzoom");
  searchBtn = document.getElementById("search");
  matchedText = document.getElementById("matched").firstChild;
  var gs = document.getElementById("frames").children;
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i], r = g.getElementsByTagName("rect")[0];
    var info = g.getElementsByTagName("title")[0].textContent;
    var f = {g: g, r: r, t: g.getElementsByTagName("text")[0], info: info,
             name: info.replace(/ \([^()]*\)$/, ""), fill: r.getAttribute("fill"),
             x: +r.getAttribute("x"), w: +r.getAttribute("width"), y: +r.getAttribute("y")};
    g.frame = f;
    frames.push(f);
  }
  var box = document.getElementById("frames");
  box.addEventListener("click", function (e) {
    var g = e.target.closest("g");
    if (g && g.frame) zoom(g.frame);
  });
  box.addEventListener("mouseover", function (e) {
    var g = e.target.closest("g");
    if (g && g.frame) details.nodeValue = "Function: " + g.frame.info;
  });
  box.addEventListener("mouseout", function () { details.nodeValue = " "; });
  unzoomBtn.addEventListener("click", unzoom);
  searchBtn.addEventListener("click", searchPrompt);
  window.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { unzoom(); clearSearch(); }
    else if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); searchPrompt(); }
  });
}
function label(f, x, w) {
  var n = Math.floor(w / (FONT_SIZE * FONT_WIDTH)), s = "";
  if (n >= 3) s = f.name.length <= n ? f.name : f.name.substring(0, n - 2) + "..";
  f.t.textContent = s;
  f.t.setAttribute("x", (x + 3).toFixed(2));
}
function place(f, x, w, shown, parent) {
  f.g.style.display = shown ? "" : "none";
  if (!shown) return;
  f.g.classList.toggle("parent", parent);
  f.r.setAttribute("x", x.toFixed(2));
  f.r.setAttribute("width", w.toFixed(2));
  label(f, x, w);
}
function above(a, b) { return INVERTED ? a.y > b.y : a.y < b.y; }
function zoom(z) {
  var full = IMAGE_WIDTH - 2 * XPAD, scale = full / z.w, tol = 0.01;
  frames.forEach(function (f) {
    if (f === z || (f.x >= z.x - tol && f.x + f.w <= z.x + z.w + tol && above(f, z))) {
      place(f, XPAD + (f.x - z.x) * scale, f.w * scale, true, false);
    } else if (f.x <= z.x + tol && f.x + f.w >= z.x + z.w - tol && above(z, f)) {
      place(f, XPAD, full, true, true);
    } else {
      place(f, 0, 0, false, false);
    }
  });
  unzoomBtn.classList.remove("hide");
}
function unzoom() {
  frames.forEach(function (f) { place(f, f.x, f.w, true, false); });
  unzoomBtn.classList.add("hide");
}
function searchPrompt() {
  if (searching) { clearSearch(); return; }
  var term = prompt("Search frames (a regular expression, e.g. ^ext4_)", "");
  if (term) search(term);
}
function search(term) {
  var re;
  try { re = new RegExp(term); } catch (err) { alert("Bad regular expression: " + err.message); return; }
  var hits = frames.filter(function (f) { return re.test(f.name); });
  hits.forEach(function (f) { f.r.setAttribute("fill", "rgb(230,0,230)"); });
  // The share of all samples under a match, a match inside another counted once.
  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
  var covered = 0, end = -Infinity;
  hits.forEach(function (f) {
    if (f.x + f.w <= end + 0.01) return;
    covered += f.w;
    end = f.x + f.w;
  });
  searching = true;
  searchBtn.textContent = "Reset Search";
  searchBtn.classList.add("on");
  matchedText.nodeValue = "Matched: " + (100 * covered / frames[0].w).toFixed(1) + "%";
}
function clearSearch() {
  frames.forEach(function (f) { f.r.setAttribute("fill", f.fill); });
  searching = false;
  searchBtn.textContent = "Search";
  searchBtn.classList.remove("on");
  matchedText.nodeValue = " ";
}
