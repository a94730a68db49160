import { attach } from './widget.js';

void attach;
