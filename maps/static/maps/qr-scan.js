// Reads the QR code of a printed CTR with the phone's camera (or from a photo) and looks the
// load up: the QR holds the public verification address /verificar/<number>/ (ctr/printing.py),
// so the number goes into the search box and the form is sent. The decoder is jsQR, installed
// from the npm registry by scripts/frontend-assets.sh and served from our static files.
// Without jsQR or a camera the buttons stay hidden and the page works as a plain search form.
(function () {
  "use strict";

  var NUMBER_RE = /CTR-\d{7}-\d{4}-\d{6,}/i;

  // The CTR number in what a QR code says: our verification address, or the bare number.
  function numberFrom(text) {
    var match = NUMBER_RE.exec(String(text || ""));
    return match ? match[0].toUpperCase() : null;
  }

  function decode(source, width, height, canvas) {
    canvas.width = width;
    canvas.height = height;
    var context = canvas.getContext("2d", { willReadFrequently: true });
    context.drawImage(source, 0, 0, width, height);
    var image = context.getImageData(0, 0, width, height);
    return window.jsQR(image.data, width, height, { inversionAttempts: "attemptBoth" });
  }

  function setUp(button) {
    var input = document.getElementById(button.getAttribute("data-scan-target"));
    var region = document.getElementById(button.getAttribute("data-scan-region"));
    if (!input || !region || typeof window.jsQR !== "function") {
      return;
    }
    var form = input.form;
    var status = region.querySelector("[role=status]");
    var holder = region.querySelector("#" + region.id + "-video");
    var close = region.querySelector("#fechar-qr");
    var file = document.getElementById(button.getAttribute("data-scan-file") || "");
    var canvas = document.createElement("canvas");
    var stream = null;
    var video = null;
    var frame = 0;

    function say(text) {
      if (status) {
        status.textContent = text;
      }
    }

    function stop() {
      if (frame) {
        window.cancelAnimationFrame(frame);
        frame = 0;
      }
      if (stream) {
        stream.getTracks().forEach(function (track) {
          track.stop();
        });
        stream = null;
      }
      if (video) {
        video.remove();
        video = null;
      }
    }

    function found(text) {
      var number = numberFrom(text);
      if (!number) {
        say("Este QR code não é de um CTR. Aponte para o QR impresso no CTR.");
        return false;
      }
      stop();
      input.value = number;
      say("CTR " + number + " lido. Buscando…");
      if (form.requestSubmit) {
        form.requestSubmit();
      } else {
        form.submit();
      }
      return true;
    }

    function tick() {
      frame = 0;
      if (!video) {
        return;
      }
      if (video.readyState >= 2 && video.videoWidth) {
        var scale = Math.min(1, 640 / video.videoWidth);
        var code = decode(
          video,
          Math.round(video.videoWidth * scale),
          Math.round(video.videoHeight * scale),
          canvas
        );
        if (code && found(code.data)) {
          return;
        }
      }
      frame = window.requestAnimationFrame(tick);
    }

    button.hidden = false;
    var fileWrap = file && file.closest("[hidden]");
    if (fileWrap) {
      fileWrap.hidden = false;
    }

    button.addEventListener("click", function () {
      region.hidden = false;
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
        say("Este navegador não abre a câmera: envie uma foto do QR code ou digite o número.");
        return;
      }
      say("Abrindo a câmera…");
      stop();
      navigator.mediaDevices
        .getUserMedia({ video: { facingMode: "environment" }, audio: false })
        .then(function (media) {
          stream = media;
          video = document.createElement("video");
          video.setAttribute("playsinline", "");
          video.muted = true;
          video.className = "qr-video";
          video.srcObject = media;
          holder.appendChild(video);
          return video.play();
        })
        .then(function () {
          say("Aponte a câmera para o QR code do CTR.");
          frame = window.requestAnimationFrame(tick);
        })
        .catch(function () {
          stop();
          say(
            "Não foi possível abrir a câmera (permissão negada ou sem câmera). Envie uma foto " +
              "do QR code ou digite o número."
          );
        });
    });

    if (close) {
      close.addEventListener("click", function () {
        stop();
        say("");
        region.hidden = true;
        button.focus();
      });
    }

    if (file) {
      file.addEventListener("change", function () {
        var picked = file.files && file.files[0];
        if (!picked) {
          return;
        }
        region.hidden = false;
        say("Lendo a foto…");
        // A data: address, which the CSP's img-src allows (a blob: one it does not).
        var reader = new FileReader();
        var image = new Image();
        image.onload = function () {
          var scale = Math.min(1, 1600 / Math.max(image.naturalWidth, image.naturalHeight));
          var code = decode(
            image,
            Math.round(image.naturalWidth * scale),
            Math.round(image.naturalHeight * scale),
            canvas
          );
          if (!code) {
            say("Nenhum QR code encontrado na foto. Tente de novo, mais perto e com luz.");
          } else {
            found(code.data);
          }
          file.value = "";
        };
        image.onerror = function () {
          say("Não foi possível abrir esta imagem.");
        };
        reader.onload = function () {
          image.src = reader.result;
        };
        reader.readAsDataURL(picked);
      });
    }

    window.addEventListener("pagehide", stop);
  }

  function start() {
    document.querySelectorAll("[data-scan-target]").forEach(setUp);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
