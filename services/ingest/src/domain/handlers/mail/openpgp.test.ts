import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CORPUS_SKIP, fixture, message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';

const from: [string, string] = ['From', 'Ann <ann@example.com>'];

describe('mail: OpenPGP', () => {
  it('a message signed inline keeps its text, dash-escaping undone, without the armour or the signature', async () => {
    const item = await parseEmail(
      message(
        [from, ['Subject', 'Release 2.4']],
        [
          'Hello all,',
          '',
          '-----BEGIN PGP SIGNED MESSAGE-----',
          'Hash: SHA256',
          '',
          'Version 2.4 is out.',
          '- -- the release team',
          '-----BEGIN PGP SIGNATURE-----',
          '',
          'iQEzBAEBCAAdFiEEqL7kV1eR3kW0vP2XkxY9Yz5Kz0QFAmVxYzcACgkQkxY9Yz5K',
          'z0Q7Xwf/ZmFrZXNpZ25hdHVyZWJ5dGVz=',
          '=AbCd',
          '-----END PGP SIGNATURE-----',
          '',
        ].join('\r\n'),
      ),
    );
    assert.equal(item.text.trim(), 'Hello all,\n\nVersion 2.4 is out.\n-- the release team');
    assert.deepEqual(item.warnings, []);
  });

  it('a real CERT advisory, signed inline: its words, not its signature', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/spamassassin-testdata/welcomelists/cert.org.eml'));
    assert.match(item.text, /CERT Advisory CA-2002-21 Vulnerability in PHP/);
    assert.doesNotMatch(item.text, /BEGIN PGP|iQCVAwUBPTyOVq/);
  });

  it('an encrypted message, inline or PGP/MIME, keeps its headers and says why it has no text', async () => {
    const inline = await parseEmail(
      message(
        [from, ['Subject', 'Secret']],
        '-----BEGIN PGP MESSAGE-----\r\n\r\nhQEMA1b2c3d4e5f6ARAAq8Zz\r\n=Xy12\r\n-----END PGP MESSAGE-----\r\n',
      ),
    );
    assert.equal(inline.text.trim(), '');
    assert.match(inline.warnings.join('\n'), /encrypted \(OpenPGP, inline\)/);
    const mime = await parseEmail(
      message(
        [
          from,
          ['Subject', 'Secret too'],
          ['MIME-Version', '1.0'],
          ['Content-Type', 'multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"'],
        ],
        [
          '--b',
          'Content-Type: application/pgp-encrypted',
          '',
          'Version: 1',
          '--b',
          'Content-Type: application/octet-stream; name="encrypted.asc"',
          '',
          '-----BEGIN PGP MESSAGE-----',
          '',
          'hQEMA1b2c3d4e5f6ARAAq8Zz',
          '-----END PGP MESSAGE-----',
          '--b--',
          '',
        ].join('\r\n'),
      ),
    );
    assert.equal(mime.title, 'Secret too');
    assert.match(mime.warnings.join('\n'), /encrypted \(OpenPGP, PGP\/MIME\): only its headers can be read/);
  });
});
