/* The transporter app's service worker. Served by ctr.field.offline_views
   from /transportador/sw.js (so its scope is the transporter's pages), which prepends
   self.CTR_OFFLINE = {scope, form, bundle, precache}.

   - Pages: network first; the issue form is kept, and without a network any page of the
     scope answers with the kept form (a reload offline opens it again).
   - Static files: what the pages loaded, kept as they asked for it (`cache` messages from
     app.js: the first visit loads before the worker controls the page).
   - The offline bundle: network first, the kept copy offline.
   - Nothing else is kept: no CTR list or detail (personal data) stays on the phone.
   - Background Sync (where the browser has it): asks the open pages to send the queue; the
     pages do it (one at a time, under a Web Lock), with the session's CSRF token. */
"use strict";

var CFG = self.CTR_OFFLINE;
var CACHE = "ctr-offline-v1";

self.addEventListener("install", function (event) {
  event.waitUntil(
    caches.open(CACHE).then(function (cache) { return cache.addAll(CFG.precache); })
      .then(function () { return self.skipWaiting(); })
  );
});

self.addEventListener("activate", function (event) {
  event.waitUntil(
    caches.keys().then(function (names) {
      return Promise.all(names.filter(function (n) { return n !== CACHE; })
        .map(function (n) { return caches.delete(n); }));
    }).then(function () { return self.clients.claim(); })
  );
});

function sameOrigin(url) {
  return new URL(url, self.location.href).origin === self.location.origin;
}

function keepable(response) {
  // A redirect (to the sign-in page, a session expired) or an error is not the page asked for.
  return response && response.ok && response.type === "basic" && !response.redirected;
}

function keep(url) {
  return fetch(url, { credentials: "same-origin" }).then(function (response) {
    if (!keepable(response)) return false;
    return caches.open(CACHE).then(function (cache) {
      return cache.put(url, response).then(function () { return true; });
    });
  }).catch(function () { return false; });
}

self.addEventListener("message", function (event) {
  var data = event.data || {};
  if (data.type === "cache") {
    var urls = (data.urls || []).filter(sameOrigin);
    var work = Promise.all(urls.map(keep)).then(function (done) {
      if (event.ports && event.ports[0]) {
        event.ports[0].postMessage({ kept: done.filter(Boolean).length, asked: urls.length });
      }
    });
    event.waitUntil(work);
  }
});

function networkFirst(request, fallbackUrl, store) {
  return fetch(request).then(function (response) {
    if (store && keepable(response)) {
      var copy = response.clone();
      caches.open(CACHE).then(function (cache) { cache.put(request.url, copy); });
    }
    return response;
  }).catch(function () {
    return caches.match(request.url).then(function (hit) {
      return hit || (fallbackUrl ? caches.match(fallbackUrl) : undefined);
    }).then(function (hit) {
      return hit || Response.error();
    });
  });
}

function cacheFirst(request) {
  return caches.match(request.url).then(function (hit) {
    if (hit) return hit;
    return fetch(request).then(function (response) {
      if (keepable(response)) {
        var copy = response.clone();
        caches.open(CACHE).then(function (cache) { cache.put(request.url, copy); });
      }
      return response;
    });
  });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  if (request.method !== "GET" || !sameOrigin(request.url)) return;
  var url = new URL(request.url);
  if (request.mode === "navigate" && url.pathname.indexOf(CFG.scope) === 0) {
    // Only the issue form is stored; the other pages fall back to it offline.
    event.respondWith(networkFirst(request, CFG.form, url.pathname === CFG.form));
  } else if (url.pathname === CFG.bundle) {
    event.respondWith(networkFirst(request, null, true));
  } else if (url.pathname.indexOf(CFG.static) === 0) {
    event.respondWith(cacheFirst(request));
  }
});

self.addEventListener("sync", function (event) {
  if (event.tag !== "ctr-offline-sync") return;
  event.waitUntil(
    self.clients.matchAll({ type: "window" }).then(function (clients) {
      clients.forEach(function (client) { client.postMessage({ type: "sync" }); });
    })
  );
});
