/* The phone's store of provisional CTRs, in IndexedDB: they survive a
   reload, a closed tab and a phone restart, which sessionStorage would not, and a
   transaction makes the device's counter safe across two open tabs.

   Stores: "meta" (the device id, drawn once, and its counter), "ctrs" (one record per
   provisional CTR, keyed by its number: state "pending", "synced" or "refused"). */
(function () {
  "use strict";

  var DB_NAME = "ctr-offline";
  var VERSION = 1;
  // No 0/O or 1/I: a driver reads the number aloud at a roadside check.
  var ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

  function open() {
    return new Promise(function (resolve, reject) {
      var request = indexedDB.open(DB_NAME, VERSION);
      request.onupgradeneeded = function () {
        var db = request.result;
        if (!db.objectStoreNames.contains("meta")) db.createObjectStore("meta");
        if (!db.objectStoreNames.contains("ctrs")) db.createObjectStore("ctrs", { keyPath: "number" });
      };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
  }

  function run(stores, mode, work) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(stores, mode);
        var result;
        tx.oncomplete = function () { db.close(); resolve(result); };
        tx.onerror = tx.onabort = function () { db.close(); reject(tx.error); };
        work(tx, function (value) { result = value; });
      });
    });
  }

  function deviceId() {
    var bytes = new Uint8Array(4);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ALPHABET[b % ALPHABET.length]; }).join("");
  }

  function pad(n) {
    var text = String(n);
    while (text.length < 4) text = "0" + text;
    return text;
  }

  /* Store a new provisional CTR: draws its number (device id + counter) and saves the
     record in one transaction; resolves with the record. */
  function add(record) {
    return run(["meta", "ctrs"], "readwrite", function (tx, done) {
      var meta = tx.objectStore("meta");
      var get = meta.get("device");
      get.onsuccess = function () {
        var device = get.result || { id: deviceId(), counter: 0 };
        device.counter += 1;
        meta.put(device, "device");
        record.number = "PROV-" + device.id + "-" + pad(device.counter);
        record.payload.provisional_number = record.number;
        tx.objectStore("ctrs").put(record);
        done(record);
      };
    });
  }

  function put(record) {
    return run(["ctrs"], "readwrite", function (tx, done) {
      tx.objectStore("ctrs").put(record);
      done(record);
    });
  }

  function remove(number) {
    return run(["ctrs"], "readwrite", function (tx, done) {
      tx.objectStore("ctrs").delete(number);
      done(true);
    });
  }

  function list() {
    return run(["ctrs"], "readonly", function (tx, done) {
      var request = tx.objectStore("ctrs").getAll();
      request.onsuccess = function () {
        done(request.result.sort(function (a, b) { return a.departure < b.departure ? 1 : -1; }));
      };
    });
  }

  // The bundle (GET /api/v1/offline-bundle/) as last fetched, for the form offline.
  function saveBundle(bundle) {
    return run(["meta"], "readwrite", function (tx, done) {
      tx.objectStore("meta").put(bundle, "bundle");
      done(bundle);
    });
  }

  function bundle() {
    return run(["meta"], "readonly", function (tx, done) {
      var request = tx.objectStore("meta").get("bundle");
      request.onsuccess = function () { done(request.result || null); };
    });
  }

  window.CTROfflineQueue = {
    add: add, put: put, remove: remove, list: list, saveBundle: saveBundle, bundle: bundle
  };
})();
