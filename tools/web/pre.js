// Run before main (emcc --pre-js): the program finds its data (the
// embeddings, sentences and shipped models make web preloads) under
// /attnviz, as ATTNVIZ_DATADIR points it there natively.
Module.preRun = Module.preRun || [];
Module.preRun.push(function() { ENV.ATTNVIZ_DATADIR = "/attnviz"; });
