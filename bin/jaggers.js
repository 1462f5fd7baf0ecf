#!/usr/bin/env node
import '../dist/bundle/cli.js';
