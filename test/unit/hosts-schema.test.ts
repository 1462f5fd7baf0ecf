// jaggers.json's hosts (issue 31; docs/hosts.md): what it takes, and the clear error a bad value gets.
import { describe, expect, it } from 'vitest';
import { parseProjectFile } from '../../src/project/project-file.js';

const file = '/p/jaggers.json';
const parseText = (text: string) => parseProjectFile(text, file);
const parse = (v: unknown) => parseText(JSON.stringify(v));
const box = { ssh: 'me@build.example.com', port: 2222, identity: '~/.ssh/id_ed25519', dir: '/srv/work/proj' };

describe('jaggers.json hosts', () => {
  it('takes hosts and an agent on one', async () => {
    const p = await parse({
      hosts: { box, gpu: { ssh: 'gpu', dir: '~/proj' } },
      agents: [
        { name: 'coder', profile: 'claude', host: 'box' },
        { name: 'local', profile: 'claude' },
      ],
    });
    expect(p.hosts).toEqual({ box, gpu: { ssh: 'gpu', dir: '~/proj' } });
    expect(p.agents[0]!.host).toBe('box');
    expect(p.agents[1]!.host).toBeUndefined();
  });

  it.each([
    [{ hosts: { box: { ...box, ssh: '-oProxyCommand=touch /tmp/x' } } }, /hosts\.box\.ssh.*not starting with "-".*got "-oProxyCommand/],
    [{ hosts: { box: { ...box, ssh: 'me@host; rm -rf /' } } }, /hosts\.box\.ssh/],
    [{ hosts: { box: { ...box, ssh: 'me@-x' } } }, /hosts\.box\.ssh/],
    [{ hosts: { box: { ...box, port: 0 } } }, /hosts\.box\.port.*got 0 \(number\)/],
    [{ hosts: { box: { ...box, port: '22' } } }, /hosts\.box\.port.*got "22" \(string\)/],
    [{ hosts: { box: { ...box, dir: 'relative/dir' } } }, /hosts\.box\.dir.*absolute path.*got "relative\/dir"/],
    [{ hosts: { box: { ...box, dir: '/a\nb' } } }, /hosts\.box\.dir.*control characters/],
    [{ hosts: { box: { ...box, identity: '' } } }, /hosts\.box\.identity/],
    [{ hosts: { box: { ...box, user: 'x' } } }, /hosts\.box.*Unrecognized key: "user"/],
    [{ hosts: { box: { port: 22, dir: '/x' } } }, /hosts\.box\.ssh/],
    [{ hosts: { Box: box } }, /hosts\.Box.*lower-case/],
    [{ hosts: [box] }, /hosts/],
  ])('refuses %j, naming the field, the value and the file', async (extra, re) => {
    const err = await parse({ ...extra, agents: [{ name: 'a', profile: 'claude' }] }).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'E_PROJECT_INVALID' });
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).toContain(file);
  });

  it('refuses an agent on a host that is not in hosts, naming the hosts there are', async () => {
    await expect(parse({ hosts: { box, gpu: box }, agents: [{ name: 'a', profile: 'claude', host: 'bxo' }] })).rejects.toMatchObject({
      code: 'E_PROJECT_INVALID',
      message: expect.stringMatching(/\/p\/jaggers\.json: field `agents\[0\]\.host`: must be one of the hosts: box, gpu, got "bxo" \(string\)/),
    });
    await expect(parse({ agents: [{ name: 'a', profile: 'claude', host: 'box' }] })).rejects.toThrow(/agents\[0\]\.host.*there is none/);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('refuses %s as a host, in hosts or on an agent', async (name) => {
    const agentOn = parse({ hosts: { box }, agents: [{ name: 'a', profile: 'claude', host: name }] });
    await expect(agentOn).rejects.toMatchObject({ code: 'E_PROJECT_INVALID', message: expect.stringContaining('agents[0].host') });
    // JSON.parse makes `__proto__` an own key, as a hand-written file would have it.
    const asKey = parseText(
      `{"hosts": {${JSON.stringify(name)}: ${JSON.stringify(box)}}, "agents": [{"name": "a", "profile": "claude", "host": ${JSON.stringify(name)}}]}`,
    );
    await expect(asKey).rejects.toMatchObject({ code: 'E_PROJECT_INVALID', message: expect.stringContaining(`hosts.${name}`) });
  });
});
