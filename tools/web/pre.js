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
var ATTNVIZ_DROP_MAX = 1536 * 1024 * 1024;
var attnvizDrops = 0;

function attnvizSay(text) {
  var s = document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.style.display = "block";
  setTimeout(function() { s.style.display = "none"; }, 8000);
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
  var dir = "/dropped/" + (++attnvizDrops) + "/";
  for (var p of files) {
    var path = dir + p[0];
    FS.mkdirTree(path.substring(0, path.lastIndexOf("/")));
    FS.writeFile(path, new Uint8Array(await p[1].arrayBuffer()));
  }
  // one path opens, as on the desktop: the first thing dropped
  ccall("platform_web_dropped", null, ["string"], [dir + tops[0]]);
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

function attnvizKey(ev) {
  if (ev.ctrlKey && !ev.altKey && (ev.key === "o" || ev.key === "O")) {
    ev.preventDefault();
    ev.stopImmediatePropagation();
    attnvizPick(ev.shiftKey);
  }
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

if (typeof window === "object") {
  window.addEventListener("keypress", attnvizKeyPress, true); // before SDL's
  window.addEventListener("dragover", function(ev) { ev.preventDefault(); });
  window.addEventListener("drop", attnvizDrop);
  window.addEventListener("keydown", attnvizKey, true); // before SDL's, on the same target

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
    removeRunDependency("attnviz-idbfs");
  });
});

function attnvizPersist() {
  return new Promise(function(ok) {
    FS.syncfs(false, function(err) {
      if (err) console.error("attnviz: the state could not be stored in IndexedDB: " + err);
      ok(!err);
    });
  });
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
});
