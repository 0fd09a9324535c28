/* global document, navigator, setTimeout, location */
// Progressive enhancement only: every page works without this file.
// - [data-copy]: a "Copy" button after the element copies its text (attribution snippets, curl lines).
// - form[data-strip-empty]: empty fields are left out of the submitted URL, so a search reads
//   /events?city=Berkeley rather than /events?q=&city=Berkeley&age_min=&...
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

  document.querySelectorAll('[data-copy]').forEach(addCopyButton);
  document.querySelectorAll('a[data-back-to-results]').forEach(backToResults);
  document.querySelectorAll('[data-share-url]').forEach(addShareButton);
  document.querySelectorAll('form[data-strip-empty]').forEach(stripEmptyOnSubmit);
})();
