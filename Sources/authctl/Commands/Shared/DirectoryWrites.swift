import AuthctlCore

/// The commands that change the directory: never sent to a replica (`Failover`), which is
/// read-only; when the primary is out they fail with its error and say so.
extension SignUp: DirectoryWrite {}
extension ConfirmSignUp: DirectoryWrite {}
extension ResendCode: DirectoryWrite {}
extension ForgotPassword: DirectoryWrite {}
extension ChangePassword: DirectoryWrite {}
extension AccountUpdate: DirectoryWrite {}
extension AccountVerify: DirectoryWrite {}
extension AccountDeleteAttribute: DirectoryWrite {}
extension AccountDelete: DirectoryWrite {}
extension MFASetup: DirectoryWrite {}
extension MFADisable: DirectoryWrite {}
extension DevicesForget: DirectoryWrite {}
