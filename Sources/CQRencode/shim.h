// qrencode.h from libqrencode (libqrencode-dev): the web page's address as a QR code, drawn in
// the terminal by the node (Sources/HuddleNode/Web/QRCode.swift).
#ifndef HUDDLE_CQRENCODE_SHIM_H
#define HUDDLE_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
