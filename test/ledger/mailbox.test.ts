// The mailbox an address is counted under for the mail limit (ledger/mailbox.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mailboxOf } from '../../ledger/mailbox.ts';

test('plus-tags fold for every domain, case everywhere, dots and googlemail.com at Gmail only', () => {
  const same: [string, string][] = [
    ['a+1@example.org', 'a@example.org'],
    ['A+news+x@Example.ORG', 'a@example.org'],
    ['  a@example.org ', 'a@example.org'],
    ['a@example.org.', 'a@example.org'],
    ['A.B+x@GMail.com', 'ab@gmail.com'],
    ['a.b@googlemail.com', 'ab@gmail.com'],
    ['x@bücher.de', 'x@xn--bcher-kva.de'],
  ];
  for (const [address, mailbox] of same) assert.equal(mailboxOf(address), mailbox, address);
  // Dots are another person outside Gmail; a local part that is all tag has nothing to fold onto.
  assert.notEqual(mailboxOf('a.b@example.org'), mailboxOf('ab@example.org'));
  assert.equal(mailboxOf('+x@example.org'), '+x@example.org');
  assert.notEqual(mailboxOf('a@example.org'), mailboxOf('a@example.com'));
});

test('folding is idempotent, and every tag of an address lands on the untagged one', () => {
  const local = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
  const domain = fc.constantFrom('example.org', 'gmail.com', 'googlemail.com', 'mail.example.co.uk');
  fc.assert(
    fc.property(local, fc.stringMatching(/^[a-z0-9+._-]{0,10}$/), domain, fc.boolean(), (l, tag, d, upper) => {
      const plain = `${l}@${d}`;
      const tagged = `${l}+${tag}@${d}`;
      const given = upper ? tagged.toUpperCase() : tagged;
      assert.equal(mailboxOf(given), mailboxOf(plain));
      assert.equal(mailboxOf(mailboxOf(given)), mailboxOf(given));
    }),
  );
});
