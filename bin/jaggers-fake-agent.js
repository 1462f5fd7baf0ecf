#!/usr/bin/env node
import '../dist/src/fake-agent/main.js';
