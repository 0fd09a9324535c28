/* global document, navigator, setTimeout, location, fetch, URLSearchParams */
// Progressive enhancement only: every page works without this file.
// - [data-copy]: a "Copy" button after the element copies its text (attribution snippets, curl lines).
// - form[data-strip-empty]: empty fields are left out of the submitted URL, so a search reads
//   /events?city=Berkeley rather than /events?q=&city=Berkeley&age_min=&...
// - [data-locate]: a "Use my location" button, only where the browser can tell (navigator.geolocation);
//   it fills the fieldset's hidden lat and lng, empties the typed place, and submits the form.
// - /docs#<an old section id>: the docs were one page; the overview keeps each old id on a link to
//   where its section moved (a[data-moved]), and this follows it at once.
// - form[data-try-it]: the docs' console asks the API with fetch, the key in an Authorization
//   header (not in the address), and shows status, headers and body under the form. The key is
//   read from the field when sent and kept nowhere else.
// - [data-back-to-results] (event pages): back to the very listing the visitor came from.
// - [data-share-url] (event pages): a Share button (the share sheet, else copy the link).
(function () {
  'use strict';

  function addCopyButton(el) {
    if (!navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy-button secondary';
    button.textContent = 'Copy';
    var label = el.getAttribute('data-copy');
    if (label) button.setAttribute('aria-label', 'Copy ' + label);
    var status = document.createElement('span');
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(el.textContent || '').then(
        function () {
          button.textContent = 'Copied';
          status.textContent = 'Copied to the clipboard';
          setTimeout(function () {
            button.textContent = 'Copy';
            status.textContent = '';
          }, 2000);
        },
        function () {
          status.textContent = 'Copying failed: select the text and copy it yourself';
        },
      );
    });
    el.insertAdjacentElement('afterend', button);
    button.insertAdjacentElement('afterend', status);
  }

  function stripEmptyOnSubmit(form) {
    form.addEventListener('submit', function () {
      var fields = form.querySelectorAll('input[name], select[name]');
      for (var i = 0; i < fields.length; i++) {
        var f = fields[i];
        if (f.type !== 'checkbox' && f.value === '') f.disabled = true;
      }
      // Re-enable after the navigation has taken the values, so Back shows the form as it was.
      setTimeout(function () {
        for (var i = 0; i < fields.length; i++) fields[i].disabled = false;
      }, 0);
    });
  }

  function addLocateButton(fieldset) {
    if (!('geolocation' in navigator)) return;
    var form = fieldset.form || fieldset.closest('form');
    var lat = fieldset.querySelector('input[name="lat"]');
    var lng = fieldset.querySelector('input[name="lng"]');
    var near = fieldset.querySelector('input[name="near"]');
    if (!form || !lat || !lng) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'locate-button secondary';
    button.textContent = 'Use my location';
    var status = document.createElement('p');
    status.className = 'locate-status';
    status.setAttribute('role', 'status');
    button.addEventListener('click', function () {
      status.textContent = 'Finding your location…';
      navigator.geolocation.getCurrentPosition(
        function (pos) {
          // Four decimals (about 10 m) say where well enough, and keep the URL short and cacheable.
          lat.value = pos.coords.latitude.toFixed(4);
          lng.value = pos.coords.longitude.toFixed(4);
          if (near) near.value = '';
          status.textContent = 'Searching near your location…';
          if (form.requestSubmit) form.requestSubmit();
          else form.submit();
        },
        function () {
          status.textContent = 'Your location is not available here: type a ZIP code or a city or town instead.';
        },
        { maximumAge: 300000, timeout: 15000 },
      );
    });
    fieldset.appendChild(button);
    fieldset.appendChild(status);
  }

  function followMovedAnchor() {
    if (location.pathname !== '/docs' && location.pathname !== '/docs/') return;
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    if (!target) return;
    // The entry itself or its own link; not a section that merely holds entries (#reference).
    var link = target.matches('a[data-moved]') ? target : target.querySelector(':scope > a[data-moved]');
    if (link) location.replace(link.href);
  }

  var BODY_MAX = 200000;

  function block(label, text) {
    var figure = document.createElement('figure');
    figure.className = 'code-block';
    var caption = document.createElement('figcaption');
    caption.textContent = label;
    var pre = document.createElement('pre');
    pre.tabIndex = 0;
    var code = document.createElement('code');
    code.textContent = text;
    pre.appendChild(code);
    figure.appendChild(caption);
    figure.appendChild(pre);
    return figure;
  }

  function pretty(type, text) {
    if (/json/.test(type || '')) {
      try {
        return JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        return text;
      }
    }
    return text.length > BODY_MAX ? text.slice(0, BODY_MAX) + '\n… (cut at ' + BODY_MAX + ' characters)' : text;
  }

  function tryIt(form) {
    var out = document.getElementById(form.getAttribute('data-result') || '');
    if (!out || typeof fetch !== 'function') return;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var url = form.getAttribute('data-try-it') || '';
      form.querySelectorAll('[data-path-param]').forEach(function (input) {
        url = url.replace('{' + input.getAttribute('data-path-param') + '}', encodeURIComponent(input.value.trim()));
      });
      var params = new URLSearchParams();
      var key = '';
      form.querySelectorAll('input').forEach(function (input) {
        if (input.hasAttribute('data-api-key')) key = input.value.trim();
        else if (input.name && input.value !== '') params.append(input.name, input.value);
      });
      var query = params.toString();
      if (query) url += '?' + query;
      var headers = {};
      if (key) headers.Authorization = 'Bearer ' + key;
      out.textContent = '';
      var status = document.createElement('p');
      status.className = 'try-status';
      status.textContent = 'Sending GET ' + url + ' …';
      out.appendChild(status);
      // no-store: the answer to a key stays out of the browser's cache; omit: the site's cookies are not the API's business.
      fetch(url, { headers: headers, cache: 'no-store', credentials: 'omit' }).then(
        function (response) {
          return response.text().then(function (text) {
            status.textContent = response.status + ' ' + response.statusText + ': GET ' + url;
            var lines = [];
            response.headers.forEach(function (value, name) {
              lines.push(name + ': ' + value);
            });
            out.appendChild(block('Response headers', lines.join('\n')));
            out.appendChild(block('Response body', pretty(response.headers.get('Content-Type'), text)));
          });
        },
        function () {
          status.textContent = 'The request failed before an answer came: check your connection and try again.';
        },
      );
    });
  }

  // Issue 28 item 5. An event page is cached for everyone, so it links to all events; the listing
  // this visitor came from is in the same-origin referrer (query and page included), when it is one.
  var LISTING = /^\/(?:events|cities\/[^/]+|categories\/[^/]+)$/;
  function backToResults(a) {
    var from;
    try {
      from = new URL(document.referrer);
    } catch {
      return; // no referrer (typed in, bookmarked, or withheld)
    }
    if (from.origin !== location.origin || !LISTING.test(from.pathname)) return;
    a.href = from.pathname + from.search;
    a.textContent = 'Back to results';
  }

  // Added at the end of its row, after the email link, so nothing on the page moves.
  function addShareButton(row) {
    var url = row.getAttribute('data-share-url');
    var title = row.getAttribute('data-share-title') || document.title;
    var canShare = typeof navigator.share === 'function';
    if (!canShare && !navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary share-button';
    button.textContent = canShare ? 'Share' : 'Copy link';
    var status = document.createElement('span');
    status.className = 'share-status';
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    button.addEventListener('click', function () {
      status.textContent = '';
      if (canShare) {
        // A closed share sheet rejects the promise: that is the visitor's choice, not an error.
        navigator.share({ title: title, url: url }).catch(function () {});
        return;
      }
      navigator.clipboard.writeText(url).then(
        function () {
          status.textContent = 'Link copied';
        },
        function () {
          status.textContent = 'Copying failed: copy the link below yourself';
        },
      );
    });
    row.appendChild(button);
    row.appendChild(status);
  }

  followMovedAnchor();
  document.querySelectorAll('form[data-try-it]').forEach(tryIt);
  document.querySelectorAll('[data-copy]').forEach(addCopyButton);
  document.querySelectorAll('form [data-locate]').forEach(addLocateButton);
  document.querySelectorAll('a[data-back-to-results]').forEach(backToResults);
  document.querySelectorAll('[data-share-url]').forEach(addShareButton);
  document.querySelectorAll('form[data-strip-empty]').forEach(stripEmptyOnSubmit);
})();
