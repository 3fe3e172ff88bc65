import CognitoClient
import SecureStore
import ArgumentParser
import TOMLKit
print("hi")
