// JavaScript library of the one-thread page (emcc --js-library, web.mk):
// emscripten's fsync under ASYNCIFY waits for IndexedDB by an asyncify
// sleep, which would unwind through the main loop's frame (the autosave's
// io_write_atomic), whose functions are not instrumented (only the
// model's run is: web.mk's WEB_ST_ASYNC). fsync as without ASYNCIFY: the
// in-memory file system is already written, and tools/web/pre.js stores
// it in IndexedDB (when the page is hidden and every 10 s), as the
// threaded page does.
mergeInto(LibraryManager.library, {
  fd_sync__deps: ['$SYSCALLS'],
  fd_sync__sig: 'ii',
  fd_sync: function(fd) {
    var stream = SYSCALLS.getStreamFromFD(fd);
    if (stream.stream_ops && stream.stream_ops.fsync)
      return -stream.stream_ops.fsync(stream);
    return 0;
  },
});
