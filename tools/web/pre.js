// Run before main (emcc --pre-js): the program finds its data (the
// embeddings, sentences and shipped models make web preloads) under
// /attnviz, as ATTNVIZ_DATADIR points it there natively.
Module.preRun = Module.preRun || [];
Module.preRun.push(function() { ENV.ATTNVIZ_DATADIR = "/attnviz"; });
// SDL's present would yield to the browser in an ASYNCIFY build (the
// one-thread page's) from inside the main loop's frame: the loop already
// returns to the browser every frame, and only the model's run yields
// (src/core/background_single.c)
Module.preRun.push(function() { ENV.SDL_EMSCRIPTEN_ASYNCIFY = "0"; });

// Files and folders dropped on the page or picked (Ctrl+O): copied into the page's memory
// under /dropped/N/ (N counts the drops), then opened as the desktop opens
// a dropped path (platform_web_dropped in src/app/platform_web.c). A drop
// larger than the tab can hold next to the model it makes is refused with
// its size, on the page, before anything is read.
//
// The copy goes ATTNVIZ_SLICE bytes at a time, each slice read from the
// File on its own (the browser reads it off the main thread and the page
// draws frames while it waits) and written into storage sized once for the
// whole file: in one go, a 128 MB model held the page 117 ms and more
// (and a second 128 MB while MEMFS copied the read buffer); a slice's write
// is a few milliseconds. Its progress is on the page's status line (the
// window's status bar shows only errors from here: platform_web_note).
// Of two drops in a row the newest wins: an older copy still under way
// stops at its next slice and its files are removed; a file or folder
// dropped again replaces its older copy.
var ATTNVIZ_DROP_MAX = 1536 * 1024 * 1024;
var ATTNVIZ_SLICE = 8 * 1024 * 1024;
var attnvizDrops = 0;
var attnvizCopying = 0; // the drop being copied (its N); an older one seeing another here stops
Module.attnvizCopies = []; // each copy: {dir, bytes, done, slices, ms, longest: its longest write, stopped} (the page test reads it)

function attnvizSay(text) {
  var s = document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.style.display = "block";
  s.dataset.progress = "";
  setTimeout(function() { if (s.textContent === text) s.style.display = "none"; }, 8000);
}

// every file under a dropped entry, as [relative path, File]
async function attnvizEntries(entry, prefix, out) {
  if (entry.isFile) {
    out.push([prefix + entry.name, await new Promise(function(ok, fail) { entry.file(ok, fail); })]);
    return;
  }
  var reader = entry.createReader();
  for (;;) {
    var batch = await new Promise(function(ok, fail) { reader.readEntries(ok, fail); });
    if (!batch.length) break;
    for (var e of batch) await attnvizEntries(e, prefix + entry.name + "/", out);
  }
}

// files ([relative path, File]) copied into the page's memory under
// /dropped/N/ and the first of tops (the names given) opened
async function attnvizOpenFiles(files, tops) {
  if (!tops.length) return;
  var total = files.reduce(function(n, p) { return n + p[1].size; }, 0);
  if (total > ATTNVIZ_DROP_MAX) {
    attnvizSay(tops[0] + " is " + (total / 1048576).toFixed(0) + " MB: too big for this tab's memory " +
               "(at most " + (ATTNVIZ_DROP_MAX / 1048576) + " MB); nothing was opened");
    return;
  }
  var n = ++attnvizDrops, dir = "/dropped/" + n + "/";
  attnvizCopying = n;
  var copy = {dir: dir, bytes: total, done: 0, slices: 0, ms: 0, longest: 0, stopped: false};
  Module.attnvizCopies.push(copy);
  var t0 = performance.now();
  try {
    for (var p of files)
      if (!await attnvizCopyFile(n, dir + p[0], p[1], copy, p[0].split("/")[0]) || attnvizCopying !== n) {
        copy.stopped = true; // a newer drop came: it is the one opened
        attnvizRemoveTree(dir.substring(0, dir.length - 1));
        return;
      }
  } catch (e) { // a file gone or changed since the drop, or no memory left for it
    attnvizRemoveTree(dir.substring(0, dir.length - 1));
    if (attnvizCopying !== n) return; // a newer drop is being read: it says what happens
    attnvizCopying = 0;
    attnvizSay(tops[0] + " could not be read into the page (" + attnvizWhy(e) + "); nothing was opened");
    return;
  }
  copy.ms = performance.now() - t0;
  attnvizCopying = 0;
  attnvizProgress(null);
  for (var t of tops) {
    // the older copy of the same name removed: it would hold its size (a
    // model's 122 MB) for the rest of the visit. What it showed is in the
    // program's memory (src/io/file_map_web.c reads a file whole), a read
    // still under way keeps its open file, and a session naming the old
    // copy opens with this one (attnvizOpenSession)
    var old = attnvizDroppedNow[t];
    if (old && old !== dir + t) attnvizRemoveTree(old);
    attnvizDroppedNow[t] = dir + t;
  }
  // the file a session waits for (attnvizReopen) dropped again: the session
  // opens, showing this copy; else one path opens, as on the desktop: the
  // first thing dropped
  var w = attnvizAwaiting;
  if (w && tops.indexOf(w.name) >= 0) {
    attnvizAwaiting = null;
    attnvizOpenSession(w.path, attnvizRetarget(w.bytes, dir + w.name));
    return;
  }
  ccall("platform_web_dropped", null, ["string"], [dir + tops[0]]);
}

// file (a File) copied to path in the page's memory a slice at a time, for
// drop n: whether it was (false: a newer drop came, and this one stopped).
// copy counts the slices and bytes, name is what the progress line calls it.
async function attnvizCopyFile(n, path, file, copy, name) {
  FS.mkdirTree(path.substring(0, path.lastIndexOf("/")));
  var stream = FS.open(path, "w");
  try {
    FS.ftruncate(stream.fd, file.size); // MEMFS's storage sized once: the writes fill it, none regrows it
    for (var at = 0; at < file.size;) {
      var buf = new Uint8Array(await file.slice(at, at + ATTNVIZ_SLICE).arrayBuffer());
      if (attnvizCopying !== n) return false;
      if (!buf.length) throw new Error(path + " ended at " + at + " of its " + file.size + " bytes (changed since the drop?)");
      var t = performance.now();
      FS.write(stream, buf, 0, buf.length, at);
      copy.longest = Math.max(copy.longest, performance.now() - t);
      copy.slices++;
      at += buf.length;
      copy.done += buf.length;
      if (copy.bytes > ATTNVIZ_SLICE)
        attnvizProgress("reading " + name + "\u2026 " + Math.round(copy.done / 1048576) + " of " +
                        Math.round(copy.bytes / 1048576) + " MB");
    }
  } finally {
    FS.close(stream);
  }
  return true;
}

// the page's status line saying text while a drop is read (null: hidden)
function attnvizProgress(text) {
  var s = document.getElementById("status");
  if (!s || (text === null && !s.dataset.progress)) return;
  s.dataset.progress = text === null ? "" : "1";
  s.textContent = text === null ? "" : text;
  s.style.display = text === null ? "none" : "block";
}

// path (a file or a folder with everything in it) removed from the page's memory
function attnvizRemoveTree(path) {
  var st;
  try {
    st = FS.stat(path);
  } catch (e) {
    return;
  }
  if (FS.isDir(st.mode)) {
    for (var e of FS.readdir(path))
      if (e !== "." && e !== "..") attnvizRemoveTree(path + "/" + e);
    FS.rmdir(path);
  } else {
    FS.unlink(path);
  }
}

// ---- sessions of dropped files -------------------------------------------------
// A dropped file or folder is only in the page's memory, at /dropped/N/NAME
// (NAME its own name, N counting this visit's drops), and a session that
// shows it (its "attention_file") names that path: after a reload it is gone.
// Such a session, kept in IndexedDB (Ctrl+O) or as the autosave, is marked
// in Ctrl+O's list and, opened, says in the status bar which file or folder
// to drop again; dropped again (the same NAME), the session opens with the
// new copy in its old copy's place. A session of a file dropped again before
// it is opened opens with that copy at once.
var attnvizDroppedNow = {}; // NAME: its newest copy this visit, /dropped/N/NAME
var attnvizAwaiting = null; // {path, name, bytes}: the session waiting for NAME

// What a session's bytes show from a drop, {root: "/dropped/N/NAME", name:
// NAME, rest: the path inside it}, or null (another file, or not a session)
function attnvizDroppedOf(bytes) {
  try {
    var s = JSON.parse(new TextDecoder().decode(bytes));
    var m = s && typeof s.attention_file === "string" &&
            /^(\/dropped\/[^/]+\/([^/]+))(\/.*)?$/.exec(s.attention_file);
    return m ? {root: m[1], name: m[2], rest: m[3] || ""} : null;
  } catch (e) {
    return null;
  }
}

// Whether d (attnvizDroppedOf's) is not in the page now
function attnvizGone(d) {
  return !!d && !FS.analyzePath(d.root).exists;
}

// The session's bytes showing the drop at root instead
function attnvizRetarget(bytes, root) {
  var d = attnvizDroppedOf(bytes), s = JSON.parse(new TextDecoder().decode(bytes));
  s.attention_file = root + d.rest;
  return new TextEncoder().encode(JSON.stringify(s, null, 1) + "\n");
}

// A session's bytes written at path and opened as a drop is, the file it
// shows from an earlier drop taken from this visit's drop of its name; a
// file of that name not dropped yet: the status bar says to drop it, and
// the session waits for it
function attnvizOpenSession(path, bytes) {
  var d = attnvizDroppedOf(bytes);
  if (attnvizGone(d)) {
    if (!attnvizDroppedNow[d.name]) {
      attnvizAwaiting = {path: path, name: d.name, bytes: bytes};
      ccall("platform_web_note", null, ["string"],
            [path.substring(path.lastIndexOf("/") + 1) + " shows \u201c" + d.name + "\u201d, which was dropped on " +
             "the page before it was reloaded (the page keeps no dropped files): drop \u201c" + d.name +
             "\u201d again and the session opens"]);
      return;
    }
    bytes = attnvizRetarget(bytes, attnvizDroppedNow[d.name]);
  }
  var dir = path.substring(0, path.lastIndexOf("/"));
  if (dir) FS.mkdirTree(dir);
  FS.writeFile(path, bytes);
  ccall("platform_web_dropped", null, ["string"], [path]);
}

async function attnvizDrop(ev) {
  ev.preventDefault();
  var dt = ev.dataTransfer, files = [], tops = [];
  var items = dt.items ? Array.from(dt.items) : [];
  var entries = items.map(function(it) { return it.webkitGetAsEntry ? it.webkitGetAsEntry() : null; });
  if (entries.length && entries.every(function(e) { return e; })) {
    for (var e of entries) { await attnvizEntries(e, "", files); tops.push(e.name); }
  } else { // a drop made by a script, or a browser without entries: its files
    for (var f of Array.from(dt.files)) { files.push([f.name, f]); tops.push(f.name); }
  }
  await attnvizOpenFiles(files, tops);
}

// Ctrl+O: the browser's file picker (a file: an attention file, a session,
// a GGUF model), Ctrl+Shift+O: a folder (a model folder), instead of the
// desktop's path prompt, which cannot name the user's files here. The key
// is kept from SDL (the picker needs the key press itself to open).
function attnvizPick(folder) {
  var input = document.createElement("input");
  input.type = "file";
  if (folder) input.webkitdirectory = true;
  input.onchange = function() {
    var files = Array.from(input.files).map(function(f) {
      return [f.webkitRelativePath || f.name, f];
    });
    var top = files.length ? files[0][0].split("/")[0] : null;
    attnvizOpenFiles(files, top ? [top] : []);
  };
  input.click();
}

// Ctrl+O with sessions kept in this browser (below): the list of them, the
// file picker one more Ctrl+O (or a click) away; with none kept, the picker
// at once. Ctrl+Shift+O: the folder picker at once. While the list is open
// it takes every key (attnvizPanelKey), so none reaches the program.
function attnvizKey(ev) {
  if (attnvizPanel) {
    attnvizPanelKey(ev);
    return;
  }
  if (ev.ctrlKey && !ev.altKey && (ev.key === "o" || ev.key === "O")) {
    ev.preventDefault();
    ev.stopImmediatePropagation();
    if (!ev.shiftKey && attnvizKept.length) attnvizShowPanel();
    else attnvizPick(ev.shiftKey);
  }
}

// the key's release, and any typed text, kept from SDL while the list is open
function attnvizPanelSwallow(ev) {
  if (!attnvizPanel) return;
  ev.preventDefault();
  ev.stopImmediatePropagation();
}

// SDL 2.26's page backend makes a keypress's text from its charCode, which
// for a character beyond U+FFFF (an emoji, as an input method or the
// emoji picker types it) is only the first UTF-16 half: SDL would type an
// invalid character. Such a keypress is kept from SDL and its whole
// character (ev.key) handed over as the text instead (platform_web_text).
function attnvizKeyPress(ev) {
  var c = ev.charCode;
  if (c < 0xD800 || c > 0xDFFF) return;
  ev.preventDefault();
  ev.stopImmediatePropagation();
  var cp = ev.key ? ev.key.codePointAt(0) : 0;
  if (cp > 0xFFFF && ev.key.length === 2)
    ccall("platform_web_text", null, ["string"], [ev.key]);
}

// An input method's text (kana before kanji, pinyin, a tablet's or a
// phone's keyboard) comes as a composition, which SDL 2.26's page backend
// does not take (it types only what keypress events carry), and which the
// browser runs only in a text field that has the focus. So a text area
// the reader never sees keeps the focus (given back after a click on the
// canvas, the list of Ctrl+O closing, or the page's return from a file
// picker); the keys still reach SDL, on the window, as before. What the
// input method is composing goes to the program as the desktop's
// SDL_TEXTEDITING (platform_web_compose: drawn at the bar's cursor), what
// it commits as typed text (platform_web_text, a few characters at a
// time: an SDL text event holds 32 bytes).
var attnvizIme = null;

function attnvizImeFocus() {
  var a = document.activeElement;
  if (attnvizIme && !attnvizPanel && (!a || a === document.body || a === Module.canvas))
    attnvizIme.focus({preventScroll: true});
}

function attnvizImeSetup() {
  var t = document.createElement("textarea");
  t.id = "attnviz-ime";
  t.setAttribute("aria-hidden", "true");
  t.setAttribute("autocomplete", "off");
  t.spellcheck = false;
  t.style.cssText = "position: fixed; left: 0; top: 0; width: 1px; height: 1px; opacity: 0; border: 0; " +
                    "padding: 0; resize: none; overflow: hidden; pointer-events: none";
  document.body.appendChild(t);
  var compose = function(s) { ccall("platform_web_compose", null, ["string"], [s]); };
  var type = function(s) {
    var cs = Array.from(s || "");
    for (var i = 0; i < cs.length; i += 7)
      ccall("platform_web_text", null, ["string"], [cs.slice(i, i + 7).join("")]);
  };
  t.addEventListener("compositionupdate", function(ev) { compose(ev.data || ""); });
  t.addEventListener("compositionend", function(ev) {
    compose("");
    type(ev.data);
    t.value = "";
  });
  // text put in without a key or a composition (an emoji picker, some
  // on-screen keyboards); a key's own text SDL takes (its keypress is not
  // let through to here), a composition's comes at its end
  t.addEventListener("input", function(ev) {
    if (ev.isComposing) return;
    if (ev.inputType === "insertText") type(ev.data);
    t.value = "";
  });
  attnvizIme = t;
  if (Module.canvas) Module.canvas.addEventListener("mousedown", function() { setTimeout(attnvizImeFocus, 0); });
  window.addEventListener("focus", attnvizImeFocus);
  attnvizImeFocus();
}

if (typeof window === "object") {
  if (document.body) attnvizImeSetup();
  else document.addEventListener("DOMContentLoaded", attnvizImeSetup);
  window.addEventListener("keypress", attnvizKeyPress, true); // before SDL's
  window.addEventListener("dragover", function(ev) { ev.preventDefault(); });
  window.addEventListener("drop", attnvizDrop);
  window.addEventListener("keydown", attnvizKey, true); // before SDL's, on the same target
  window.addEventListener("keyup", attnvizPanelSwallow, true);
  // a press outside the open list closes it, and does nothing else
  window.addEventListener("mousedown", function(ev) {
    if (!attnvizPanel || attnvizPanel.el.contains(ev.target)) return;
    attnvizPanelSwallow(ev);
    attnvizClosePanel();
  }, true);
}

// A file handed to the user as a download under name (data: its bytes)
function attnvizDownload(name, data) {
  var type = name.endsWith(".png") ? "image/png" : name.endsWith(".svg") ? "image/svg+xml"
           : name.endsWith(".csv") ? "text/csv" : name.endsWith(".json") ? "application/json"
           : "application/octet-stream";
  // a copy: a Blob cannot be made of a view of shared memory
  var blob = new Blob([new Uint8Array(data)], {type: type});
  var a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(function() { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// ---- sessions kept in the browser --------------------------------------------
// A session saved with Ctrl+S (platform_session_written) is downloaded and
// kept in IndexedDB: database "attnviz", store "sessions", a record a path
// in the page ({path, name, saved: ms since 1970, size, bytes}), saved again
// under the same path replacing the record. After a reload the page's
// memory, where the file was written, is gone; Ctrl+O lists the kept ones
// (attnvizShowPanel), and one chosen is written back at its path and opened
// as a dropped file is. The storing refused (storage full, a private
// window, IndexedDB off): the status bar says so (platform_web_note); the
// download has happened before. A session names the model or file it shows
// by its path in the page: a shipped model's is there at every visit, a
// dropped one's only until a reload (then it waits for the same name to be
// dropped again: attnvizOpenSession).
var attnvizKept = []; // the kept sessions, without their bytes, newest first
var attnvizDb = null; // the database, once opened
Module.attnvizKeeps = []; // each storing: {path, ok, why, syncMs, ms} (the page test reads it)

function attnvizOpenDb() {
  if (attnvizDb) return Promise.resolve(attnvizDb);
  return new Promise(function(ok, fail) {
    if (typeof indexedDB !== "object" || !indexedDB) return fail(new Error("this browser has no IndexedDB"));
    var rq = indexedDB.open("attnviz", 1);
    rq.onupgradeneeded = function() { rq.result.createObjectStore("sessions", {keyPath: "path"}); };
    rq.onsuccess = function() { attnvizDb = rq.result; ok(attnvizDb); };
    rq.onerror = function() { fail(rq.error); };
  });
}

// work(store) in a transaction of mode on the sessions; a promise of its
// request's result once the transaction is complete (a put is stored only
// then: a full disk aborts the transaction, not the request)
function attnvizSessions(mode, work) {
  return attnvizOpenDb().then(function(db) {
    return new Promise(function(ok, fail) {
      var tx = db.transaction("sessions", mode);
      var rq = work(tx.objectStore("sessions"));
      tx.oncomplete = function() { ok(rq ? rq.result : undefined); };
      tx.onabort = tx.onerror = function() {
        fail(tx.error || (rq && rq.error) || new Error("the browser ended the transaction"));
      };
    });
  });
}

function attnvizWhy(e) {
  return e && e.name && e.name !== "Error" ? e.name + ": " + e.message : String(e && e.message || e);
}

// the kept sessions' list read again (at the start: Ctrl+O must know at once
// whether there is one, as the picker opens only in the key's own handler)
function attnvizListKept() {
  return attnvizSessions("readonly", function(s) { return s.getAll(); }).then(function(all) {
    attnvizKept = all.map(function(r) {
      return {path: r.path, name: r.name, saved: r.saved, size: r.size, dropped: attnvizDroppedOf(r.bytes)};
    })
                     .sort(function(a, b) { return b.saved - a.saved; });
    return attnvizKept;
  }, function(e) {
    console.error("attnviz: the kept sessions could not be read from IndexedDB (" + attnvizWhy(e) + ")");
    return attnvizKept;
  });
}

// the session just written at path (absolute) kept; a promise of whether it was
function attnvizKeep(path) {
  var t0 = performance.now();
  var name = path.substring(path.lastIndexOf("/") + 1);
  var entry = {path: path, ok: null};
  Module.attnvizKeeps.push(entry);
  var rec;
  var done = new Promise(function(ok) {
    rec = {path: path, name: name, saved: Date.now(), bytes: new Uint8Array(FS.readFile(path))};
    rec.size = rec.bytes.length;
    ok(attnvizSessions("readwrite", function(s) { return s.put(rec); }));
  }).then(function() {
    attnvizKept = [{path: path, name: name, saved: rec.saved, size: rec.size, dropped: attnvizDroppedOf(rec.bytes)}]
      .concat(attnvizKept.filter(function(k) { return k.path !== path; }));
    entry.ok = true;
    return true;
  }, function(e) {
    entry.ok = false;
    entry.why = attnvizWhy(e);
    console.error("attnviz: " + path + " was not kept in IndexedDB (" + entry.why + ")");
    ccall("platform_web_note", null, ["string"],
          [name + " was downloaded, but this browser's storage did not keep it (" + entry.why + ")"]);
    return false;
  }).then(function(ok) {
    entry.ms = performance.now() - t0;
    return ok;
  });
  entry.syncMs = performance.now() - t0;
  return done;
}

// a kept session written back at its path and opened as a drop is
function attnvizReopen(path) {
  return attnvizSessions("readonly", function(s) { return s.get(path); }).then(function(rec) {
    if (!rec) throw new Error("it is no longer kept");
    attnvizOpenSession(path, rec.bytes);
  }).catch(function(e) {
    ccall("platform_web_note", null, ["string"], [path + " could not be read back from this browser's storage (" +
                                                  attnvizWhy(e) + ")"]);
  });
}

function attnvizForget(path) {
  return attnvizSessions("readwrite", function(s) { return s.delete(path); }).then(function() {
    attnvizKept = attnvizKept.filter(function(k) { return k.path !== path; });
  }, function(e) {
    console.error("attnviz: " + path + " could not be forgotten (" + attnvizWhy(e) + ")");
  });
}

function attnvizDownloadKept(path) {
  attnvizSessions("readonly", function(s) { return s.get(path); }).then(function(rec) {
    if (rec) attnvizDownload(rec.name, rec.bytes);
  });
}

// ---- Ctrl+O's list of the kept sessions ---------------------------------------
var attnvizPanel = null; // {el, at: the chosen row}

function attnvizButton(text, title, fn) {
  var b = document.createElement("button");
  b.textContent = text;
  b.title = title;
  b.style.cssText = "font: inherit; font-size: 13px; margin-left: 0.4em; background: #3a3a3a; color: #ddd;" +
                    "border: 1px solid #555; border-radius: 3px; padding: 1px 6px; cursor: pointer";
  b.onclick = function(ev) { ev.stopPropagation(); fn(); };
  return b;
}

function attnvizRenderPanel() {
  var p = attnvizPanel, el = p.el;
  el.textContent = "";
  var h = document.createElement("div");
  h.textContent = "Open";
  h.style.cssText = "font-weight: bold; font-size: 17px; margin-bottom: 0.4em";
  el.appendChild(h);
  var intro = document.createElement("div");
  intro.textContent = attnvizKept.length ? "Sessions kept in this browser (each Ctrl+S keeps one):"
                                         : "No session is kept in this browser now.";
  el.appendChild(intro);
  var ul = document.createElement("ul");
  ul.style.cssText = "list-style: none; margin: 0.5em 0; padding: 0";
  p.at = Math.max(0, Math.min(p.at, attnvizKept.length - 1));
  attnvizKept.forEach(function(k, i) {
    var li = document.createElement("li");
    li.dataset.path = k.path;
    li.style.cssText = "padding: 4px 6px; cursor: pointer; border-radius: 3px;" +
                       (i === p.at ? "background: #264f78; color: #fff" : "");
    var name = document.createElement("span");
    name.className = "attnviz-kept-name";
    name.textContent = k.name;
    name.style.fontWeight = "bold";
    var when = document.createElement("span");
    when.textContent = "  saved " + new Date(k.saved).toLocaleString() + ", " + Math.max(1, Math.round(k.size / 1024)) + " KB" +
                       (k.path !== "/" + k.name ? "  (" + k.path + ")" : "");
    when.style.cssText = "color: #aaa; font-size: 13px";
    li.appendChild(name);
    li.appendChild(when);
    if (attnvizGone(k.dropped) && !attnvizDroppedNow[k.dropped.name]) {
      var d = k.dropped;
      var gone = document.createElement("div");
      gone.className = "attnviz-kept-dropped";
      gone.textContent = "shows \u201c" + d.name + "\u201d, dropped on the page before a reload: " +
                         "opened, it waits for \u201c" + d.name + "\u201d to be dropped again";
      gone.style.cssText = "color: #e0a050; font-size: 13px; margin-left: 0.2em";
      li.appendChild(gone);
    }
    li.appendChild(attnvizButton("download", "a copy of this session as a file", function() { attnvizDownloadKept(k.path); }));
    li.appendChild(attnvizButton("forget", "remove it from this browser's storage", function() {
      attnvizForget(k.path).then(function() { if (attnvizPanel) attnvizRenderPanel(); });
    }));
    li.onclick = function() { attnvizClosePanel(); attnvizReopen(k.path); };
    ul.appendChild(li);
  });
  el.appendChild(ul);
  var row = document.createElement("div");
  row.appendChild(attnvizButton("A file from this computer\u2026 (Ctrl+O)", "the browser's file picker", function() {
    attnvizClosePanel(); attnvizPick(false);
  }));
  row.appendChild(attnvizButton("A model folder\u2026 (Ctrl+Shift+O)", "the browser's folder picker", function() {
    attnvizClosePanel(); attnvizPick(true);
  }));
  row.firstChild.style.marginLeft = "0";
  el.appendChild(row);
  var keys = document.createElement("div");
  keys.textContent = "\u2191 \u2193 choose \u00b7 Enter open \u00b7 Delete forget \u00b7 Esc close";
  keys.style.cssText = "color: #aaa; font-size: 13px; margin-top: 0.6em";
  el.appendChild(keys);
}

function attnvizShowPanel() {
  var el = document.createElement("div");
  el.id = "attnviz-open";
  el.style.cssText = "position: fixed; left: 50%; top: 12%; transform: translateX(-50%); z-index: 10;" +
                     "min-width: 26em; max-width: 90vw; max-height: 70vh; overflow: auto; padding: 0.8em 1em;" +
                     "background: #252526; color: #ddd; font: 15px sans-serif; border: 1px solid #555;" +
                     "border-radius: 6px; box-shadow: 0 4px 24px rgba(0, 0, 0, 0.6)";
  attnvizPanel = {el: el, at: 0};
  attnvizRenderPanel();
  document.body.appendChild(el);
}

function attnvizClosePanel() {
  if (!attnvizPanel) return;
  attnvizPanel.el.remove();
  attnvizPanel = null;
  attnvizImeFocus();
}

// the list's keys; every key kept from SDL while it is open
function attnvizPanelKey(ev) {
  ev.preventDefault();
  ev.stopImmediatePropagation();
  var p = attnvizPanel, k = attnvizKept[p.at];
  if (ev.ctrlKey && !ev.altKey && (ev.key === "o" || ev.key === "O")) {
    attnvizClosePanel();
    attnvizPick(ev.shiftKey);
  } else if (ev.key === "Escape") {
    attnvizClosePanel();
  } else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    p.at += ev.key === "ArrowDown" ? 1 : -1;
    attnvizRenderPanel();
  } else if (ev.key === "Enter" && k) {
    attnvizClosePanel();
    attnvizReopen(k.path);
  } else if (ev.key === "Delete" && k) {
    attnvizForget(k.path).then(function() { if (attnvizPanel) attnvizRenderPanel(); });
  }
}

// SDL's per-user folder (/libsdl: the autosave, attnviz/attnviz/autosave.json)
// kept in the browser's IndexedDB, so the next visit restores it as the
// desktop's next start does. Read back before main runs (a run dependency);
// written back when the page is hidden (after the program has written its
// autosave: platform_web_suspend) and every 10 s.
Module.preRun.push(function() {
  FS.mkdirTree("/libsdl");
  FS.mount(IDBFS, {}, "/libsdl");
  addRunDependency("attnviz-idbfs");
  FS.syncfs(true, function(err) {
    if (err) console.error("attnviz: the saved state could not be read from IndexedDB: " + err);
    attnvizLastVisit();
    removeRunDependency("attnviz-idbfs");
  });
});

// The autosave's session of what was shown (the program restores it at the
// start) showing a file dropped before the reload, which the program
// cannot open: kept as a session waiting for that file to be dropped again
// (attnvizOpenFiles), at ATTNVIZ_LAST_VISIT; the status bar says so once
// the page runs (postRun, over the program's "not restored")
var ATTNVIZ_LAST_VISIT = "/attnviz-last-visit.json";
var attnvizLastVisitSay = null;

function attnvizLastVisit() {
  var shown = "/libsdl/attnviz/attnviz/shown.json";
  if (!FS.analyzePath(shown).exists) return;
  var bytes = FS.readFile(shown), d = attnvizDroppedOf(bytes);
  if (!attnvizGone(d)) return;
  attnvizAwaiting = {path: ATTNVIZ_LAST_VISIT, name: d.name, bytes: bytes};
  attnvizLastVisitSay = "the page showed \u201c" + d.name + "\u201d, dropped on it before it was reloaded " +
                        "(the page keeps no dropped files): drop \u201c" + d.name + "\u201d again to go back to it";
}

// The storing refused (storage full or off): the status bar says so once,
// and again only after a storing has worked since (it is tried every 10 s)
var attnvizPersistSaid = false;

// One storing at a time (emscripten warns of two FS.syncfs in flight, each
// writing the whole folder): asked during one, one more runs after it, for
// what was written since; the callers asking meanwhile share it. A promise
// of whether the storing worked.
var attnvizPersisting = null, attnvizPersistNext = null;

function attnvizPersist() {
  if (!attnvizPersisting) return attnvizPersistNow();
  if (!attnvizPersistNext)
    attnvizPersistNext = attnvizPersisting.then(function() {
      attnvizPersistNext = null;
      return attnvizPersistNow();
    });
  return attnvizPersistNext;
}

function attnvizPersistNow() {
  var p = new Promise(function(ok) {
    FS.syncfs(false, function(err) {
      if (err) {
        console.error("attnviz: the state could not be stored in IndexedDB: " + err);
        if (!attnvizPersistSaid)
          ccall("platform_web_note", null, ["string"],
                ["the autosave could not be stored in this browser (" + attnvizWhy(err) +
                 "): a reload starts from the last one stored"]);
      }
      attnvizPersistSaid = !!err;
      ok(!err);
    });
  });
  attnvizPersisting = p;
  p.then(function() { if (attnvizPersisting === p) attnvizPersisting = null; });
  return p;
}

// the autosave written, then stored; a promise of the storing
function attnvizSuspend() {
  ccall("platform_web_suspend", null, [], []);
  return attnvizPersist();
}

Module.postRun = Module.postRun || [];
Module.postRun.push(function() {
  document.addEventListener("visibilitychange", function() {
    if (document.visibilityState === "hidden") attnvizSuspend();
  });
  setInterval(attnvizPersist, 10000);
  attnvizListKept();
  if (attnvizLastVisitSay) ccall("platform_web_note", null, ["string"], [attnvizLastVisitSay]);
});
