// libqrencode through pkg-config (`libqrencode`, Debian libqrencode-dev): draws the otpauth://
// URI of a new authenticator app as a QR code in the terminal. Only the executable uses it.
#include <qrencode.h>
